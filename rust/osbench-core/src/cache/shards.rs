//! SHARDS spatial sampling (Waldspurger et al., FAST 2015) and an exact, bounded LRU stack.
//!
//! A key is in the sample, in all its accesses, when the low [`SAMPLE_BITS`] bits of its hash
//! fall below `rate * 2**SAMPLE_BITS`. A cache of c objects is then modelled by a cache of
//! c * rate objects over the sample. That stops working when the scaled cache holds only a
//! handful of objects: whether one hot key is in the sample or not then moves the hit ratio
//! by many points. So the same pass over the trace can also run an exact LRU stack truncated
//! at a small depth, whose memory is bounded by that depth (not by the trace's distinct keys).

use super::marks::{Marks, BLOCK_BITS};
use super::CHUNK;
use crate::cancel::Cancel;
use crate::error::{check_len, invalid, Result};
use crate::hash::splitmix64;

/// The sample keeps a key when `hash & (2**SAMPLE_BITS - 1) < rate * 2**SAMPLE_BITS`.
pub const SAMPLE_BITS: u32 = 24;
const SAMPLE_MASK: u64 = (1 << SAMPLE_BITS) - 1;

/// The sampling threshold for `rate`, which must be in (0, 1].
pub fn threshold(rate: f64) -> Result<u64> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(invalid("rate", rate, "a sampling rate in (0, 1]"));
    }
    Ok((rate * (1u64 << SAMPLE_BITS) as f64) as u64)
}

/// One flag per access: is its key (a 64-bit pattern) in the sample?
pub fn spatial_mask(keys: &[u64], rate: f64, seed: u64, out: &mut [bool], cancel: &Cancel) -> Result<()> {
    let threshold = threshold(rate)?;
    check_len("out", out.len(), keys.len(), "key")?;
    cancel.plan(keys.len() as u64);
    for (out, keys) in out.chunks_mut(CHUNK).zip(keys.chunks(CHUNK)) {
        cancel.check()?;
        for (flag, &k) in out.iter_mut().zip(keys) {
            *flag = splitmix64(k.wrapping_add(seed)) & SAMPLE_MASK < threshold;
        }
        cancel.progress(keys.len() as u64);
    }
    Ok(())
}

/// What one SHARDS pass for LRU gives.
pub struct LruShards {
    /// The sampled accesses' keys (64-bit patterns), in trace order.
    pub kept: Vec<u64>,
    /// `exact_hits[c - 1]`: the exact LRU hits of the whole trace at capacity c, for c up to
    /// the depth asked for.
    pub exact_hits: Vec<u64>,
}

/// Sample `keys` at `rate` and, when `exact_depth > 0`, count the exact LRU hits at every
/// capacity up to `exact_depth` in the same pass.
pub fn lru_shards(keys: &[u64], rate: f64, seed: u64, exact_depth: usize, cancel: &Cancel) -> Result<LruShards> {
    let threshold = threshold(rate)?;
    let mut kept_keys = Vec::with_capacity((keys.len() as f64 * rate * 1.1) as usize + 16);
    let mut stack = BoundedLruStack::new(exact_depth);
    cancel.plan(keys.len() as u64);
    cancel.check()?;
    for chunk in keys.chunks(CHUNK) {
        for &bits in chunk {
            let hash = splitmix64(bits.wrapping_add(seed));
            if hash & SAMPLE_MASK < threshold {
                kept_keys.push(bits);
            }
            if exact_depth > 0 {
                stack.access(hash);
            }
        }
        cancel.advance(chunk.len() as u64)?;
    }
    let mut exact_hits = stack.distances;
    for d in 1..exact_hits.len() {
        exact_hits[d] += exact_hits[d - 1];
    }
    Ok(LruShards { kept: kept_keys, exact_hits })
}

/// The top `depth` entries of the LRU stack, with each access's stack distance.
///
/// It is an LRU cache of `depth` objects: a key is found exactly when its stack distance is
/// at most `depth`, and that distance is 1 + the number of keys accessed since, counted as
/// marks on a window of access times (as the unbounded curve does, see `curve.rs`). Keys are
/// held as their sampling hash: splitmix64 is a bijection on 64-bit words, so the hash names
/// the key, and the table needs no rehashing.
struct BoundedLruStack {
    depth: usize,
    time_of: TimeTable,
    hash_at: Vec<u64>,
    marks: Marks,
    now: usize,
    /// No live mark lies before this time: the least recently used key is at or after it.
    oldest: usize,
    /// `distances[d]`: accesses at stack distance d + 1.
    distances: Vec<u64>,
}

impl BoundedLruStack {
    fn new(depth: usize) -> Self {
        // A window several times the depth makes renumbering (O(depth)) rare.
        let window = if depth == 0 { 0 } else { 8 * depth + BLOCK_BITS };
        BoundedLruStack {
            depth,
            time_of: TimeTable::new(depth + 1),
            hash_at: vec![0; window],
            marks: Marks::new(window),
            now: 0,
            oldest: 0,
            distances: vec![0; depth],
        }
    }

    /// An access to the key whose sampling hash is `hash`.
    #[inline]
    fn access(&mut self, hash: u64) {
        if self.now == self.hash_at.len() {
            self.renumber();
        }
        let slot = self.time_of.find(hash);
        match self.time_of.time_at(slot) {
            Some(previous) => {
                // Live marks after `previous`: the other keys accessed since, all within depth.
                let above = (self.marks.live - self.marks.count_through(previous as usize)) as usize;
                if let Some(count) = self.distances.get_mut(above) {
                    *count += 1;
                }
                self.marks.clear(previous as usize);
                self.time_of.fill(slot, hash, self.now as u32);
            }
            None => {
                // Insert first, into the free slot the lookup found, then make room.
                self.time_of.fill(slot, hash, self.now as u32);
                if self.marks.live as usize == self.depth {
                    self.evict_least_recent();
                }
            }
        }
        self.marks.set(self.now);
        self.hash_at[self.now] = hash;
        self.now += 1;
    }

    fn evict_least_recent(&mut self) {
        while self.oldest < self.now && !self.marks.is_set(self.oldest) {
            self.oldest += 1;
        }
        if self.oldest < self.now {
            self.time_of.remove(self.hash_at[self.oldest]);
            self.marks.clear(self.oldest);
            self.oldest += 1;
        }
    }

    /// Move the live marks to times 0..live, keeping their order.
    fn renumber(&mut self) {
        let mut next = 0usize;
        for old in self.oldest..self.now {
            if self.marks.is_set(old) {
                let hash = self.hash_at[old];
                self.hash_at[next] = hash;
                let slot = self.time_of.find(hash);
                self.time_of.fill(slot, hash, next as u32);
                next += 1;
            }
        }
        self.marks.reset_to_prefix(next);
        self.now = next;
        self.oldest = 0;
    }
}

/// Key hash -> access time for the keys in a [`BoundedLruStack`]: open addressing with linear
/// probing and backward-shift deletion (no tombstones), at most half full, indexed by the
/// hash's top bits. Small enough to stay in cache, unlike a map of every key of the trace.
struct TimeTable {
    slots: Vec<(u64, u32)>,
    shift: u32,
}

const FREE: u32 = u32::MAX;

impl TimeTable {
    fn new(max_len: usize) -> Self {
        let n = (2 * max_len).max(2).next_power_of_two();
        TimeTable { slots: vec![(0, FREE); n], shift: 64 - n.trailing_zeros() }
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize // shift < 64: the table has two slots or more
    }

    /// The slot holding `hash`, or the free slot where it would go.
    #[inline]
    fn find(&self, hash: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut s = self.home(hash);
        while self.slots[s].1 != FREE && self.slots[s].0 != hash {
            s = (s + 1) & mask;
        }
        s
    }

    #[inline]
    fn time_at(&self, slot: usize) -> Option<u32> {
        let time = self.slots[slot].1;
        (time != FREE).then_some(time)
    }

    /// Set `slot` (found by [`TimeTable::find`] for `hash`) to `time`.
    #[inline]
    fn fill(&mut self, slot: usize, hash: u64, time: u32) {
        self.slots[slot] = (hash, time);
    }

    /// Remove `hash`, shifting later members of its probe run back so lookups need no tombstones.
    fn remove(&mut self, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut hole = self.find(hash);
        if self.slots[hole].1 == FREE {
            return;
        }
        let mut s = hole;
        loop {
            s = (s + 1) & mask;
            if self.slots[s].1 == FREE {
                break;
            }
            let home = self.home(self.slots[s].0);
            // The member at `s` may fill the hole unless its home lies cyclically in (hole, s].
            let stays = if hole <= s { hole < home && home <= s } else { hole < home || home <= s };
            if !stays {
                self.slots[hole] = self.slots[s];
                hole = s;
            }
        }
        self.slots[hole].1 = FREE;
    }
}
