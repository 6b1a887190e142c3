//! Best fit: the smallest free block that is large enough; ties go to the lowest address.

use super::freelist::FreeList;

/// The chosen block as (address, size), or None when no block is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<(u64, u64)> {
    list.by_size().range((size, 0)..).next().map(|&(s, a)| (a, s))
}
