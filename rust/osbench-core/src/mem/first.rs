//! First fit: the lowest-addressed free block that is large enough.

use super::freelist::FreeList;

/// The position (in address order) of the chosen block, or None when none is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<usize> {
    list.sizes().iter().position(|&s| s >= size)
}
