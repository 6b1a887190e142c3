//! A priority queue whose entries can be changed in place: OPT's next-use order and GDSF's
//! priorities.
//!
//! A 4-ary max-heap of (key, handle) in which each handle (an id, or a slot) knows its index, so
//! an object's entry is updated where it is instead of being pushed again: no stale entries to
//! skip or sweep, a heap as small as the cache, and four children side by side (one or two cache
//! lines), so half the levels of a binary heap.

use super::memory::filled;
use super::policy::ensure;

/// `place[handle]` of a handle that is not in the heap.
const ABSENT: u32 = u32::MAX;
/// Children per node.
const ARITY: usize = 4;

/// One entry: ordered by key, then by handle (the larger first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry<K> {
    key: K,
    handle: u32,
}

pub struct IndexedHeap<K> {
    heap: Vec<Entry<K>>,
    /// Each handle's index in `heap`, or ABSENT.
    place: Vec<u32>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// An empty heap for about `entries` entries, with handles below `handles` (more grow).
    pub fn new(entries: usize, handles: usize) -> Self {
        IndexedHeap { heap: Vec::with_capacity(entries), place: filled(handles, ABSENT) }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether `handle` is in the heap.
    #[cfg(test)]
    fn contains(&self, handle: u32) -> bool {
        self.place.get(handle as usize).is_some_and(|&i| i != ABSENT)
    }

    /// Add `handle`, which is not in the heap, with `key`.
    #[inline(always)]
    pub fn push(&mut self, handle: u32, key: K) {
        ensure(&mut self.place, handle, ABSENT);
        let e = Entry { key, handle };
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1, e);
    }

    /// Give `handle` a new `key`, if it is in the heap; returns whether it was.
    #[inline(always)]
    pub fn update(&mut self, handle: u32, key: K) -> bool {
        ensure(&mut self.place, handle, ABSENT);
        let i = self.place[handle as usize];
        if i == ABSENT {
            return false;
        }
        self.settle(i as usize, Entry { key, handle });
        true
    }

    /// Take `handle` out of the heap, if it is in; returns whether it was.
    #[inline]
    pub fn remove(&mut self, handle: u32) -> bool {
        let Some(&i) = self.place.get(handle as usize).filter(|&&i| i != ABSENT) else { return false };
        self.place[handle as usize] = ABSENT;
        let Some(last) = self.heap.pop() else { return false };
        let i = i as usize;
        if i < self.heap.len() {
            // The last entry fills the hole.
            self.settle(i, last);
        }
        true
    }

    /// Remove and return the largest entry: (key, handle).
    #[inline]
    pub fn pop(&mut self) -> Option<(K, u32)> {
        let top = *self.heap.first()?;
        self.place[top.handle as usize] = ABSENT;
        let last = self.heap.pop()?;
        if !self.heap.is_empty() {
            self.sift_down(0, last);
        }
        Some((top.key, top.handle))
    }

    /// Put `e` at index `i` (a hole) and record where it is.
    #[inline(always)]
    fn set(&mut self, i: usize, e: Entry<K>) {
        self.heap[i] = e;
        self.place[e.handle as usize] = i as u32;
    }

    /// Move `e`, to go at index `i` in place of the entry there, up or down to its place.
    #[inline(always)]
    fn settle(&mut self, i: usize, e: Entry<K>) {
        if e > self.heap[i] {
            self.sift_up(i, e);
        } else {
            self.sift_down(i, e);
        }
    }

    /// Move `e`, to go at index `i`, up past every smaller parent.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, e: Entry<K>) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = self.heap[parent];
            if p >= e {
                break;
            }
            self.set(i, p);
            i = parent;
        }
        self.set(i, e);
    }

    /// Move `e`, to go at index `i`, down past every larger child.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, e: Entry<K>) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            let best = if first + ARITY <= n {
                // A full family: the largest of four in two rounds, without branches on the data.
                let kids = &self.heap[first..first + ARITY];
                let a = usize::from(kids[1] > kids[0]);
                let b = 2 + usize::from(kids[3] > kids[2]);
                first + if kids[b] > kids[a] { b } else { a }
            } else if first < n {
                (first + 1..n).fold(first, |best, c| if self.heap[c] > self.heap[best] { c } else { best })
            } else {
                break;
            };
            let child = self.heap[best];
            if child <= e {
                break;
            }
            self.set(i, child);
            i = best;
        }
        self.set(i, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::SplitMix64;
    use std::collections::BTreeMap;

    #[test]
    fn pops_in_order_under_random_pushes_updates_and_pops() {
        let mut rng = SplitMix64(3);
        let mut heap = IndexedHeap::new(0, 0);
        let mut model: BTreeMap<u32, u64> = BTreeMap::new();
        for _ in 0..20_000 {
            let handle = rng.below(300) as u32;
            let key = rng.below(50);
            match rng.below(5) {
                4 => {
                    assert_eq!(heap.remove(handle), model.remove(&handle).is_some());
                }
                0 => {
                    let top = model.iter().map(|(&h, &k)| (k, h)).max();
                    assert_eq!(heap.pop(), top);
                    if let Some((_, h)) = top {
                        model.remove(&h);
                    }
                }
                _ if model.contains_key(&handle) => {
                    assert!(heap.update(handle, key));
                    model.insert(handle, key);
                }
                _ => {
                    assert!(!heap.update(handle, key));
                    heap.push(handle, key);
                    model.insert(handle, key);
                }
            }
            assert_eq!(heap.len(), model.len());
            assert!(model.keys().all(|&h| heap.contains(h)) && !heap.contains(300));
        }
    }
}
