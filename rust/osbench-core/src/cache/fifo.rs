//! FIFO: evict the object that entered first; hits change nothing.

use super::{ensure, Policy};
use std::collections::VecDeque;

pub struct Fifo {
    capacity: usize,
    /// Sized mode: bytes held, and each id's size when it entered.
    used: u64,
    size_of: Vec<u64>,
    queue: VecDeque<u32>,
    cached: Vec<bool>,
}

impl Fifo {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Fifo {
            capacity,
            used: 0,
            size_of: Vec::new(),
            queue: VecDeque::with_capacity(capacity.min(n_ids)),
            cached: vec![false; n_ids],
        }
    }
}

impl Policy for Fifo {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.cached, id, false);
        if self.cached[id as usize] {
            return true;
        }
        if self.queue.len() == self.capacity {
            if let Some(victim) = self.queue.pop_front() {
                self.cached[victim as usize] = false;
            }
        }
        self.queue.push_back(id);
        self.cached[id as usize] = true;
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        ensure(&mut self.cached, id, false);
        if self.cached[id as usize] {
            return true;
        }
        if size > self.capacity as u64 {
            return false;
        }
        ensure(&mut self.size_of, id, 0);
        while self.used + size > self.capacity as u64 {
            match self.queue.pop_front() {
                Some(victim) => {
                    self.cached[victim as usize] = false;
                    self.used -= self.size_of[victim as usize];
                }
                None => break,
            }
        }
        self.queue.push_back(id);
        self.cached[id as usize] = true;
        self.size_of[id as usize] = size;
        self.used += size;
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.cached.get(id as usize).copied().unwrap_or(false)
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
}
