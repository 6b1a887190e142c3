//! Worst fit: the largest free block (if it is large enough); ties go to the lowest address.
//! It keeps the leftover pieces large, and so cuts the big blocks first.

use super::freelist::FreeList;

/// The chosen block as (address, size), or None when no block is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<(u64, u64)> {
    let largest = list.largest();
    if largest < size {
        return None;
    }
    list.by_size().range((largest, 0)..).next().map(|&(s, a)| (a, s))
}
