//! First fit: the lowest-addressed free block that is large enough.

/// The position (in address order) of the chosen block among the free blocks' `sizes` (in
/// address order), or None when none is large enough.
pub fn pick(sizes: &[u64], size: u64) -> Option<usize> {
    sizes.iter().position(|&s| s >= size)
}
