//! Worst fit: the largest free block (if it is large enough); ties go to the lowest address.
//! It keeps the leftover pieces large, and so cuts the big blocks first.

use super::freelist::FreeList;

/// The position (in address order) of the chosen block, or None when none is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<usize> {
    let largest = list.largest();
    if largest < size {
        return None;
    }
    list.sizes().iter().position(|&s| s == largest)
}
