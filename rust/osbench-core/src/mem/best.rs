//! Best fit: the smallest free block that is large enough; ties go to the lowest address.

use super::freelist::FreeList;

/// The position (in address order) of the chosen block, or None when none is large enough.
pub fn pick(list: &FreeList, size: u64) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for (i, &s) in list.sizes().iter().enumerate() {
        // Strictly smaller wins, so among equal sizes the lowest address stays.
        if s >= size && best.is_none_or(|(b, _)| s < b) {
            best = Some((s, i));
            if s == size {
                break; // an exact fit cannot be beaten
            }
        }
    }
    best.map(|(_, i)| i)
}
