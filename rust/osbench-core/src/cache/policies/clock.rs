//! CLOCK (second chance): the cached objects sit on a circle with one reference bit each.
//! A hit sets the bit. To evict, the hand sweeps: a set bit is cleared and the hand moves on;
//! the first object with a clear bit leaves. A newcomer joins just behind the hand (the last
//! to be examined), its bit clear, or set when `bit_on_insert` (the textbook variant).
//!
//! The circle is a queue whose front is under the hand, as libCacheSim's Clock keeps it:
//! moving the hand past an object sends it to the back, and newcomers join at the back.

use crate::cache::demand::Evict;
use crate::cache::memory::prefetch;
use crate::cache::policy::{ensure, Options};
use std::collections::VecDeque;

/// Per id: not cached, cached with a clear bit, cached with a set bit (one byte, one load).
const ABSENT: u8 = 0;
const CLEAR: u8 = 1;
const REFERENCED: u8 = 2;

pub struct Clock {
    bit_on_insert: bool,
    /// Front: under the hand.
    circle: VecDeque<u32>,
    state: Vec<u8>,
}

impl Evict for Clock {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Clock {
            bit_on_insert: options.flag("bit_on_insert"),
            circle: VecDeque::with_capacity(capacity.min(n_ids)),
            state: vec![ABSENT; n_ids],
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.state, id, ABSENT);
        let s = &mut self.state[id as usize];
        if *s == ABSENT {
            return false;
        }
        *s = REFERENCED;
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        loop {
            let candidate = self.circle.pop_front()?;
            let s = &mut self.state[candidate as usize];
            if *s == REFERENCED {
                *s = CLEAR;
                self.circle.push_back(candidate);
            } else {
                *s = ABSENT;
                return Some(candidate);
            }
        }
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        self.circle.push_back(id);
        self.state[id as usize] = if self.bit_on_insert { REFERENCED } else { CLEAR };
        id
    }
    #[inline(always)]
    fn prefetch(&self, id: u32) {
        prefetch(self.state.as_ptr().wrapping_add(id as usize));
    }
    fn contains(&self, id: u32) -> bool {
        self.state.get(id as usize).is_some_and(|&s| s != ABSENT)
    }
    fn len(&self) -> usize {
        self.circle.len()
    }
}
