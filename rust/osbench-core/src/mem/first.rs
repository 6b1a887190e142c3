//! First fit: the lowest-addressed free block that is large enough.

use super::freelist::FreeList;

/// The chosen block as (address, size), or None when no block is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<(u64, u64)> {
    list.blocks().find(|&(_, s)| s >= size)
}
