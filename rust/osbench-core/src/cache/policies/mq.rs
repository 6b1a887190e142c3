//! MQ, Multi-Queue (Zhou, Philbin and Li, USENIX ATC 2001), as libCacheSim defines it
//! (`MQ.c`): `n_queue` LRU queues by log2 of the access count, a lifetime after which an
//! unused object moves one queue down, and Qout, a FIFO of evicted ids that remembers their
//! counts. The rules are spelled out in the reference engine's `MQ` class; this file follows
//! them step for step. Sized mode counts bytes in the cache and in Qout.

use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{put, Options, Policy};
use crate::cache::NIL;

/// The most queues (libCacheSim's `MQ_MAX_N_QUEUE`).
pub const MAX_QUEUES: u64 = 64;
/// The place of a slot that holds a Qout id.
const QOUT: u8 = u8::MAX;
/// libCacheSim keeps counts in an `int32_t`.
const MAX_COUNT: u32 = i32::MAX as u32;

pub struct Mq {
    capacity: u64,
    lifetime: u64,
    qout_size: u64,
    /// The virtual clock: one tick per hit and per insertion.
    clock: u64,
    /// Cached objects and Qout ids each hold a slot.
    slots: Slots,
    links: Links,
    /// The queues (front: most recent), then Qout (front: newest).
    lists: Vec<List>,
    used: u64,
    qout_used: u64,
    /// Per slot: its queue (or QOUT), access count, expiry and (sized) size.
    place: Vec<u8>,
    count: Vec<u32>,
    expiry: Vec<u64>,
    size_of: Vec<u64>,
}

impl Mq {
    fn n_queue(&self) -> usize {
        self.lists.len() - 1
    }

    #[inline(always)]
    fn size<const SIZED: bool>(&self, slot: u32) -> u64 {
        if SIZED {
            self.size_of[slot as usize]
        } else {
            1
        }
    }

    /// The queue of an object accessed `count` times: min(floor(log2 count), n_queue - 1).
    #[inline(always)]
    fn queue_of(&self, count: u32) -> usize {
        (count.max(1).ilog2() as usize).min(self.n_queue() - 1)
    }

    #[inline(always)]
    fn place_in(&mut self, slot: u32, q: usize) {
        self.links.push_front(&mut self.lists[q], slot);
        self.place[slot as usize] = q as u8;
    }

    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let q = self.place[slot as usize];
        let q = if q == QOUT { self.n_queue() } else { q as usize };
        self.links.remove(&mut self.lists[q], slot);
    }

    /// The clock ticks; in each queue from 1 up, an expired least recent object moves down one.
    #[inline]
    fn adjust(&mut self) {
        self.clock += 1;
        for q in 1..self.n_queue() {
            let oldest = self.lists[q].tail;
            if oldest != NIL && self.expiry[oldest as usize] < self.clock {
                self.links.remove(&mut self.lists[q], oldest);
                self.place_in(oldest, q - 1);
                self.expiry[oldest as usize] = self.clock + self.lifetime;
            }
        }
    }

    /// Evict the least recent object of the lowest non-empty queue; its id enters Qout if it fits.
    fn evict<const SIZED: bool>(&mut self) {
        let Some(q) = (0..self.n_queue()).find(|&q| self.lists[q].len > 0) else { return };
        let victim = self.lists[q].tail;
        self.links.remove(&mut self.lists[q], victim);
        let size = self.size::<SIZED>(victim);
        self.used -= size;
        if size > self.qout_size {
            self.slots.release(victim);
            return;
        }
        let qout = self.n_queue();
        while self.qout_used + size > self.qout_size {
            let Some(old) = self.links.pop_back(&mut self.lists[qout]) else { break };
            self.qout_used -= self.size::<SIZED>(old);
            self.slots.release(old);
        }
        self.links.push_front(&mut self.lists[qout], victim);
        self.place[victim as usize] = QOUT;
        self.qout_used += size;
    }
}

impl Policy for Mq {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let n_queue = options.int("n_queue") as usize;
        let ratio = options.real("qout_size_ratio");
        // libCacheSim: (uint64_t)((double)cache_size * Qout_size_ratio).
        let qout_size = (capacity as f64 * ratio) as u64;
        let expected = (capacity as u64).saturating_add(qout_size).saturating_add(1).min(n_ids as u64) as usize;
        Mq {
            capacity: capacity as u64,
            lifetime: options.int("lifetime"),
            qout_size,
            clock: 0,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            lists: vec![List::default(); n_queue + 1],
            used: 0,
            qout_used: 0,
            place: Vec::with_capacity(expected),
            count: Vec::with_capacity(expected),
            expiry: Vec::with_capacity(expected),
            size_of: Vec::new(),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        let mut remembered = None;
        if slot != NIL {
            let s = slot as usize;
            if self.place[s] != QOUT {
                self.unlink(slot);
                self.count[s] = (self.count[s] + 1).min(MAX_COUNT);
                let q = self.queue_of(self.count[s]);
                self.place_in(slot, q);
                self.expiry[s] = self.clock + self.lifetime;
                self.adjust();
                return true;
            }
            // Found in Qout: it leaves Qout, admitted or not.
            self.unlink(slot);
            self.qout_used -= self.size::<SIZED>(slot);
            remembered = Some(self.count[s]);
            self.slots.release(slot);
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity {
            self.evict::<SIZED>();
        }
        let count = remembered.map_or(1, |c| (c + 1).min(MAX_COUNT));
        let slot = self.slots.assign(id);
        put(&mut self.place, slot, 0);
        put(&mut self.count, slot, count);
        put(&mut self.expiry, slot, self.clock + self.lifetime);
        if SIZED {
            put(&mut self.size_of, slot, size);
        }
        let q = self.queue_of(count);
        self.place_in(slot, q);
        self.used += size;
        self.adjust();
        false
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        self.slots.prefetch(id);
    }
    fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && self.place[slot as usize] != QOUT
    }
    fn len(&self) -> usize {
        self.lists[..self.n_queue()].iter().map(|l| l.len).sum()
    }
    fn used(&self) -> u64 {
        self.used
    }
}
