//! Best fit: the smallest free block that is large enough; ties go to the lowest address.

/// The position (in address order) of the chosen block among the free blocks' `sizes` (in
/// address order), or None when none is large enough.
pub fn pick(sizes: &[u64], size: u64) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for (i, &s) in sizes.iter().enumerate() {
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
