//! SHARDS spatial sampling (Waldspurger et al., FAST 2015) and an exact, bounded LRU stack.
//!
//! A key is in the sample, in all its accesses, when the low [`SAMPLE_BITS`] bits of its hash
//! fall below `rate * 2**SAMPLE_BITS`. A cache of c objects is then modelled by a cache of
//! c * rate objects over the sample. That stops working when the scaled cache holds only a
//! handful of objects: whether one hot key is in the sample or not then moves the hit ratio
//! by many points. So the same pass over the trace can also run an exact LRU stack truncated
//! at a small depth, whose memory is bounded by that depth (not by the trace's distinct keys).

use super::curve::CHUNK;
use super::keys::Key;
use super::marks::{Marks, BLOCK_BITS};
use crate::error::{invalid, Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// The sample keeps a key when `hash & (2**SAMPLE_BITS - 1) < rate * 2**SAMPLE_BITS`.
pub const SAMPLE_BITS: u32 = 24;
const SAMPLE_MASK: u64 = (1 << SAMPLE_BITS) - 1;

/// splitmix64's finaliser: every input bit moves every output bit.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The sampling threshold for `rate`, which must be in (0, 1].
pub fn threshold(rate: f64) -> Result<u64> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(invalid("rate", rate, "a sampling rate in (0, 1]"));
    }
    Ok((rate * (1u64 << SAMPLE_BITS) as f64) as u64)
}


/// One flag per access: is its key in the sample?
pub fn spatial_mask<K: Key>(keys: &[K], rate: f64, seed: u64, out: &mut [bool]) -> Result<()> {
    let threshold = threshold(rate)?;
    if out.len() != keys.len() {
        return Err(invalid("out", format!("{} entries", out.len()), format!("{} entries, one per key", keys.len())));
    }
    for (flag, &k) in out.iter_mut().zip(keys) {
        *flag = splitmix64(k.bits().wrapping_add(seed)) & SAMPLE_MASK < threshold;
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
pub fn lru_shards<K: Key>(keys: &[K], rate: f64, seed: u64, exact_depth: usize, cancel: &AtomicBool) -> Result<LruShards> {
    let threshold = threshold(rate)?;
    let mut kept_keys = Vec::with_capacity((keys.len() as f64 * rate * 1.1) as usize + 16);
    let mut stack = BoundedLruStack::new(exact_depth, seed);
    for chunk in keys.chunks(CHUNK) {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        for &k in chunk {
            let bits = k.bits();
            let hash = splitmix64(bits.wrapping_add(seed));
            if hash & SAMPLE_MASK < threshold {
                kept_keys.push(bits);
            }
            if exact_depth > 0 {
                stack.access(bits, hash);
            }
        }
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
/// marks on a window of access times (as the unbounded curve does, see `curve.rs`).
struct BoundedLruStack {
    depth: usize,
    time_of: TimeTable,
    key_at: Vec<u64>,
    marks: Marks,
    now: usize,
    /// No live mark lies before this time: the least recently used key is at or after it.
    oldest: usize,
    /// `distances[d]`: accesses at stack distance d + 1.
    distances: Vec<u64>,
}

impl BoundedLruStack {
    fn new(depth: usize, seed: u64) -> Self {
        // A window several times the depth makes renumbering (O(depth)) rare.
        let window = if depth == 0 { 0 } else { 8 * depth + BLOCK_BITS };
        BoundedLruStack {
            depth,
            time_of: TimeTable::new(depth, seed),
            key_at: vec![0; window],
            marks: Marks::new(window),
            now: 0,
            oldest: 0,
            distances: vec![0; depth],
        }
    }

    #[inline]
    fn access(&mut self, key: u64, hash: u64) {
        if self.now == self.key_at.len() {
            self.renumber();
        }
        let now = self.now as u32;
        match self.time_of.get_mut(key, hash) {
            Some(time) => {
                let previous = *time as usize;
                *time = now;
                // Live marks after `previous`: the other keys accessed since, all within depth.
                let above = (self.marks.live - self.marks.count_through(previous)) as usize;
                if let Some(count) = self.distances.get_mut(above) {
                    *count += 1;
                }
                self.marks.clear(previous);
            }
            None => {
                if self.marks.live as usize == self.depth {
                    self.evict_least_recent();
                }
                self.time_of.insert(key, hash, now);
            }
        }
        self.marks.set(self.now);
        self.key_at[self.now] = key;
        self.now += 1;
    }

    fn evict_least_recent(&mut self) {
        while self.oldest < self.now && !self.marks.is_set(self.oldest) {
            self.oldest += 1;
        }
        if self.oldest < self.now {
            let key = self.key_at[self.oldest];
            self.time_of.remove(key, self.time_of.hash(key));
            self.marks.clear(self.oldest);
            self.oldest += 1;
        }
    }

    /// Move the live marks to times 0..live, keeping their order.
    fn renumber(&mut self) {
        let mut next = 0usize;
        for old in self.oldest..self.now {
            if self.marks.is_set(old) {
                let key = self.key_at[old];
                self.key_at[next] = key;
                if let Some(time) = self.time_of.get_mut(key, self.time_of.hash(key)) {
                    *time = next as u32;
                }
                next += 1;
            }
        }
        self.marks.reset_to_prefix(next);
        self.now = next;
        self.oldest = 0;
    }
}

/// Key -> access time for the keys in a [`BoundedLruStack`]: open addressing with linear
/// probing and backward-shift deletion, at most half full, indexed by the top bits of the
/// key's sampling hash. Small enough to stay in cache, unlike a map of every key of the trace.
struct TimeTable {
    keys: Vec<u64>,
    times: Vec<u32>,
    shift: u32,
    /// The sampling seed: a key's table hash is its sampling hash.
    seed: u64,
}

const FREE: u32 = u32::MAX;

impl TimeTable {
    fn new(max_len: usize, seed: u64) -> Self {
        let slots = (2 * max_len + 2).next_power_of_two();
        TimeTable { keys: vec![0; slots], times: vec![FREE; slots], shift: 64 - slots.trailing_zeros(), seed }
    }

    #[inline]
    fn hash(&self, key: u64) -> u64 {
        splitmix64(key.wrapping_add(self.seed))
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        // `hash` >> 64 would overflow for a one-slot table; there are always two or more.
        (hash >> self.shift) as usize
    }

    /// The slot holding `key`, or the free slot where it would go.
    #[inline]
    fn find(&self, key: u64, hash: u64) -> usize {
        let mask = self.keys.len() - 1;
        let mut s = self.home(hash);
        while self.times[s] != FREE && self.keys[s] != key {
            s = (s + 1) & mask;
        }
        s
    }

    #[inline]
    fn get_mut(&mut self, key: u64, hash: u64) -> Option<&mut u32> {
        let s = self.find(key, hash);
        if self.times[s] == FREE {
            None
        } else {
            Some(&mut self.times[s])
        }
    }

    /// Insert a key that is not in the table.
    #[inline]
    fn insert(&mut self, key: u64, hash: u64, time: u32) {
        let s = self.find(key, hash);
        self.keys[s] = key;
        self.times[s] = time;
    }

    /// Remove `key`, shifting later members of its probe run back so lookups need no tombstones.
    fn remove(&mut self, key: u64, hash: u64) {
        let mask = self.keys.len() - 1;
        let mut hole = self.find(key, hash);
        if self.times[hole] == FREE {
            return;
        }
        let mut s = hole;
        loop {
            s = (s + 1) & mask;
            if self.times[s] == FREE {
                break;
            }
            let home = self.home(self.hash(self.keys[s]));
            // The member at `s` may fill the hole unless its home lies cyclically in (hole, s].
            let stays = if hole <= s { hole < home && home <= s } else { hole < home || home <= s };
            if !stays {
                self.keys[hole] = self.keys[s];
                self.times[hole] = self.times[s];
                hole = s;
            }
        }
        self.times[hole] = FREE;
    }
}

