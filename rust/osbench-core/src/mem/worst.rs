//! Worst fit: the largest free block (if it is large enough); ties go to the lowest address.
//! It keeps the leftover pieces large, and so cuts the big blocks first.

/// The position (in address order) of the chosen block among the free blocks' `sizes` (in
/// address order), or None when none is large enough.
pub fn pick(sizes: &[u64], size: u64) -> Option<usize> {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if largest < size {
        return None;
    }
    sizes.iter().position(|&s| s == largest)
}
