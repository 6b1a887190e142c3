//! MQ, Multi-Queue (Zhou, Philbin and Li, USENIX ATC 2001), as libCacheSim defines it
//! (`MQ.c`): `n_queue` LRU queues by log2 of the access count, a lifetime after which an
//! unused object moves one queue down, and Qout, a FIFO of evicted ids that remembers their
//! counts. The rules are spelled out in the reference engine's `MQ` class; this file follows
//! them step for step. Sized mode counts bytes in the cache and in Qout.

use crate::cache::list::{self, Link, Linked, List, PerId};
use crate::cache::memory::prefetch;
use crate::cache::policy::{ensure, Options, Policy};
use crate::cache::NIL;

/// The most queues (libCacheSim's `MQ_MAX_N_QUEUE`).
pub const MAX_QUEUES: u64 = 64;
/// The place of a slot that holds a Qout id.
const QOUT: u8 = u8::MAX;
/// libCacheSim keeps counts in an `int32_t`.
const MAX_COUNT: u32 = i32::MAX as u32;

/// Everything a step reads of one slot, in one cache line: its links in its list, its place
/// (queue or QOUT), count, expiry and id (the list neighbours are the only other lines a hit
/// touches).
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Node {
    link: Link,
    count: u32,
    id: u32,
    expiry: u64,
    place: u8,
}

const FREE: Node = Node { link: Link::NONE, count: 0, id: NIL, expiry: 0, place: 0 };

impl Linked for Node {
    #[inline(always)]
    fn link(&self) -> Link {
        self.link
    }
    #[inline(always)]
    fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}

pub struct Mq {
    capacity: u64,
    lifetime: u64,
    qout_size: u64,
    /// The virtual clock: one tick per hit and per insertion.
    clock: u64,
    /// Per id: its slot (a cached object or a Qout id), or NIL.
    slot_of: PerId,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// The queues, then Qout (lists of slots: the front the most recent, or for Qout the newest).
    lists: Vec<List>,
    used: u64,
    qout_used: u64,
    /// Per slot (sized mode): the object's size.
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

    /// Put `slot` at the front of list `q` (its place set to `place`).
    #[inline(always)]
    fn push_front(&mut self, q: usize, slot: u32, place: u8) {
        self.nodes[slot as usize].place = place;
        list::push_front(&mut self.nodes, &mut self.lists[q], slot);
    }

    /// Take `slot` out of its list.
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let place = self.nodes[slot as usize].place;
        let q = if place == QOUT { self.n_queue() } else { place as usize };
        list::unlink(&mut self.nodes, &mut self.lists[q], slot);
    }

    #[inline(always)]
    fn release(&mut self, slot: u32) {
        let id = self.nodes[slot as usize].id;
        self.slot_of.set(id, NIL);
        self.free.push(slot);
    }

    #[inline(always)]
    fn assign(&mut self, id: u32) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.nodes.push(FREE);
                (self.nodes.len() - 1) as u32
            }
        };
        self.nodes[slot as usize].id = id;
        self.slot_of.set(id, slot);
        slot
    }

    /// The clock ticks; in each queue from 1 up, an expired least recent object moves down one.
    #[inline(always)]
    fn adjust(&mut self) {
        self.clock += 1;
        for q in 1..self.n_queue() {
            let oldest = self.lists[q].tail;
            if oldest != NIL && self.nodes[oldest as usize].expiry < self.clock {
                self.unlink(oldest);
                self.push_front(q - 1, oldest, (q - 1) as u8);
                self.nodes[oldest as usize].expiry = self.clock + self.lifetime;
            }
        }
    }

    /// Evict the least recent object of the lowest non-empty queue; its id enters Qout if it fits.
    fn evict<const SIZED: bool>(&mut self) {
        let Some(q) = (0..self.n_queue()).find(|&q| self.lists[q].len > 0) else { return };
        let victim = self.lists[q].tail;
        self.unlink(victim);
        let size = self.size::<SIZED>(victim);
        self.used -= size;
        if size > self.qout_size {
            self.release(victim);
            return;
        }
        let qout = self.n_queue();
        while self.qout_used + size > self.qout_size {
            let old = self.lists[qout].tail;
            if old == NIL {
                break;
            }
            self.unlink(old);
            self.qout_used -= self.size::<SIZED>(old);
            self.release(old);
        }
        self.push_front(qout, victim, QOUT);
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
            slot_of: PerId::new(n_ids),
            nodes: Vec::with_capacity(expected),
            free: Vec::new(),
            lists: vec![List::default(); n_queue + 1],
            used: 0,
            qout_used: 0,
            size_of: Vec::new(),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slot_of.get(id);
        let mut remembered = None;
        if slot != NIL {
            let node = self.nodes[slot as usize];
            if node.place != QOUT {
                self.unlink(slot);
                let count = (node.count + 1).min(MAX_COUNT);
                let q = self.queue_of(count);
                self.push_front(q, slot, q as u8);
                let n = &mut self.nodes[slot as usize];
                n.count = count;
                n.expiry = self.clock + self.lifetime;
                self.adjust();
                return true;
            }
            // Found in Qout: it leaves Qout, admitted or not.
            self.unlink(slot);
            self.qout_used -= self.size::<SIZED>(slot);
            remembered = Some(node.count);
            self.release(slot);
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity {
            self.evict::<SIZED>();
        }
        let count = remembered.map_or(1, |c| (c + 1).min(MAX_COUNT));
        let slot = self.assign(id);
        if SIZED {
            ensure(&mut self.size_of, slot, 0);
            self.size_of[slot as usize] = size;
        }
        let q = self.queue_of(count);
        self.push_front(q, slot, q as u8);
        let n = &mut self.nodes[slot as usize];
        n.count = count;
        n.expiry = self.clock + self.lifetime;
        self.used += size;
        self.adjust();
        false
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        self.slot_of.prefetch(id);
    }
    /// The slot's node: a hit reads and rewrites it, a Qout id is found in it.
    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let slot = self.slot_of.peek(id);
        if slot != NIL {
            prefetch(self.nodes.as_ptr().wrapping_add(slot as usize));
        }
    }
    fn contains(&self, id: u32) -> bool {
        let slot = self.slot_of.peek(id);
        slot != NIL && self.nodes[slot as usize].place != QOUT
    }
    fn len(&self) -> usize {
        self.lists[..self.n_queue()].iter().map(|l| l.len).sum()
    }
    fn used(&self) -> u64 {
        self.used
    }
}
