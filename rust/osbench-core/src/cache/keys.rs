//! From arbitrary keys to dense ids, and each access's next-use time.
//!
//! Mapping keys once up front lets every policy index plain arrays by id instead of hashing
//! per access. The table is open addressing with linear probing and a multiplicative
//! (Fibonacci) hash: a few ns per key, against ~90 ns for a SipHash `HashMap`.
//!
//! Once a trace has a million distinct keys the table is far larger than the CPU's caches, so a
//! lookup waits on memory, not on hashing: [`dense_ids`] asks for the bucket of the key
//! [`KEYS_AHEAD`] places further on before each lookup, so that many misses are in flight at once.

use super::memory::{filled, filled_or_cancelled, prefetch, KEYS_AHEAD};
use super::CHUNK;
use super::NEVER;
use crate::cancel::Cancel;
use crate::error::{check_len, invalid, Result};
use crate::hash::GOLDEN;

/// A key of a [`KeyMap`]: 64-bit patterns (traces), or Python integers in [-2**63, 2**64)
/// (online caches, where -1 and 2**64-1 are different keys).
pub trait MapKey: Copy + Eq + Default {
    /// 64 well-spread bits of the key (the table keeps the top bits of `bits * GOLDEN`).
    fn bits(self) -> u64;
}
impl MapKey for u64 {
    #[inline]
    fn bits(self) -> u64 {
        self
    }
}
impl MapKey for i128 {
    #[inline]
    fn bits(self) -> u64 {
        (self as u64) ^ ((self >> 64) as u64).rotate_left(32)
    }
}

/// The key of each dense id (`ids` from [`dense_ids`] over `keys`, `n_ids` of them): what
/// [`Accesses::with_keys`](super::accesses::Accesses::with_keys) takes.
pub fn id_keys(keys: &[u64], ids: &[u32], n_ids: usize) -> Vec<u64> {
    let mut out = vec![0; n_ids];
    for (&k, &id) in keys.iter().zip(ids) {
        out[id as usize] = k;
    }
    out
}

/// Key -> dense id, assigned in order of first appearance.
pub struct KeyMap<K: MapKey = u64> {
    /// Key and id side by side: one cache line visit per probe.
    slots: Vec<Entry<K>>,
    shift: u32,
    len: usize,
}

#[derive(Clone, Copy)]
struct Entry<K> {
    key: K,
    id: u32,
}

const EMPTY: u32 = u32::MAX;
/// The largest number of distinct keys: ids are u32 and u32::MAX marks an empty slot.
pub const MAX_IDS: usize = (u32::MAX - 1) as usize;

impl<K: MapKey> KeyMap<K> {
    pub fn with_capacity(expected: usize) -> Self {
        let slots = (expected.max(8) * 2).next_power_of_two();
        KeyMap {
            slots: filled(slots, Entry { key: K::default(), id: EMPTY }),
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    /// Number of distinct keys seen.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn slot(&self, key: K) -> usize {
        (key.bits().wrapping_mul(GOLDEN) >> self.shift) as usize
    }

    /// The slot holding `key` and its id, or the empty slot where it would go and EMPTY.
    #[inline(always)]
    fn find(&self, key: K) -> (usize, u32) {
        let mask = self.slots.len() - 1;
        // `& mask` changes nothing (the slot is below the length) but lets the compiler drop
        // the bounds checks of the probe.
        let mut s = self.slot(key) & mask;
        loop {
            let e = self.slots[s];
            if e.id == EMPTY || e.key == key {
                return (s, e.id);
            }
            s = (s + 1) & mask;
        }
    }

    /// Ask for the cache line where `key`'s probe starts, ahead of [`KeyMap::id_of`].
    #[inline(always)]
    pub fn prefetch(&self, key: K) {
        prefetch(self.slots.as_ptr().wrapping_add(self.slot(key)));
    }

    /// The id of `key`, if seen.
    pub fn get(&self, key: K) -> Option<u32> {
        let (_, id) = self.find(key);
        (id != EMPTY).then_some(id)
    }

    /// The id of `key`, assigning the next free id if new.
    #[inline(always)]
    pub fn id_of(&mut self, key: K) -> Result<u32> {
        let (s, found) = self.find(key);
        if found != EMPTY {
            return Ok(found);
        }
        self.add(s, key)
    }

    /// Give the new `key` the next id, in the empty slot `s` its probe ended at. Out of the
    /// per-key path: most keys of a trace are repeats.
    #[inline(never)]
    fn add(&mut self, s: usize, key: K) -> Result<u32> {
        if self.len >= MAX_IDS {
            return Err(invalid(
                "trace",
                format!("more than {MAX_IDS} distinct keys"),
                "at most 2^32 - 2 distinct keys",
            ));
        }
        let id = self.len as u32;
        self.slots[s] = Entry { key, id };
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        Ok(id)
    }

    fn grow(&mut self) {
        let new_len = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, filled(new_len, Entry { key: K::default(), id: EMPTY }));
        self.shift = 64 - new_len.trailing_zeros();
        for e in old.into_iter().filter(|e| e.id != EMPTY) {
            let (s, _) = self.find(e.key);
            self.slots[s] = e;
        }
    }

    /// Grow now, if need be, so that `more` new keys fit without growing (which takes seconds
    /// once the table holds tens of millions of keys): the new table is filled and the keys
    /// moved a piece at a time between looks at `cancel`. Interrupted, the map is left empty.
    pub fn reserve(&mut self, more: usize, cancel: &Cancel) -> Result<()> {
        let mut new_len = self.slots.len();
        while (self.len + more) * 2 > new_len {
            new_len *= 2;
        }
        if new_len == self.slots.len() {
            return Ok(());
        }
        let old = std::mem::replace(self, KeyMap::with_capacity(0));
        let empty = Entry { key: K::default(), id: EMPTY };
        let mut grown = KeyMap {
            slots: filled_or_cancelled(new_len, empty, cancel)?,
            shift: 64 - new_len.trailing_zeros(),
            len: old.len,
        };
        for (i, e) in old.slots.iter().filter(|e| e.id != EMPTY).enumerate() {
            if i % CHUNK == 0 {
                cancel.check()?;
            }
            let (s, _) = grown.find(e.key);
            grown.slots[s] = *e;
        }
        *self = grown;
        Ok(())
    }
}

/// Map keys (64-bit patterns: a signed key is taken by its bits, which is one-to-one) to dense
/// ids in order of first appearance, into `out`. Returns the number of distinct keys.
/// Progress: one unit a key, [`CHUNK`] at a time.
pub fn dense_ids(keys: &[u64], out: &mut [u32], cancel: &Cancel) -> Result<usize> {
    check_len("out", out.len(), keys.len(), "key")?;
    // Expect many repeats; the table grows if the guess is low.
    let mut map = KeyMap::with_capacity((keys.len() / 8).clamp(1024, 1 << 22));
    for &k in keys.iter().take(KEYS_AHEAD) {
        map.prefetch(k);
    }
    let last = keys.len().saturating_sub(1);
    cancel.plan(keys.len() as u64);
    cancel.check()?;
    for (c, (out, chunk)) in out.chunks_mut(CHUNK).zip(keys.chunks(CHUNK)).enumerate() {
        let start = c * CHUNK;
        map.reserve(chunk.len(), cancel)?;
        for (i, (o, &k)) in out.iter_mut().zip(chunk).enumerate() {
            // Near the end the last key is asked for again: harmless, and no branch.
            map.prefetch(keys[(start + i + KEYS_AHEAD).min(last)]);
            *o = map.id_of(k)?;
        }
        cancel.advance(chunk.len() as u64)?;
    }
    Ok(map.len())
}

/// For each access, the index of the next access to the same id ([`NEVER`] if none).
/// One backward pass over an array of last-seen positions. Progress: one unit an access.
pub fn next_use(ids: &[u32], n_ids: usize, out: &mut [u64], cancel: &Cancel) -> Result<()> {
    check_len("out", out.len(), ids.len(), "access")?;
    let mut seen = vec![NEVER; n_ids];
    cancel.plan(ids.len() as u64);
    cancel.check()?;
    let mut end = ids.len();
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        for i in (start..end).rev() {
            let id = ids[i] as usize;
            if id >= n_ids {
                return Err(invalid("ids", ids[i], format!("ids below n_ids={n_ids}")));
            }
            out[i] = seen[id];
            seen[id] = i as u64;
        }
        cancel.advance((end - start) as u64)?;
        end = start;
    }
    Ok(())
}

/// Key -> dense id in little memory, for streams whose distinct keys outgrow the trace in
/// memory: each key is kept once, in id order (8 bytes), and the table holds ids only (4
/// bytes a slot, filled to at most 3/4), so a key costs 13 to 19 bytes, and no more than 19
/// while the table grows (the old table goes before the new one is built from the keys). A
/// [`KeyMap`] keeps key and id side by side in 16-byte slots filled to at most 1/2: 32 to 64
/// bytes a key, 96 while it grows; it probes faster, as each probe reads one slot.
pub struct CompactKeyMap {
    /// The keys by id.
    keys: Vec<u64>,
    /// Slot -> id, or EMPTY.
    table: Vec<u32>,
    shift: u32,
}

impl Default for CompactKeyMap {
    fn default() -> Self {
        CompactKeyMap::new()
    }
}

impl CompactKeyMap {
    const MIN_SLOTS: usize = 1 << 10;

    pub fn new() -> Self {
        CompactKeyMap {
            keys: Vec::new(),
            table: vec![EMPTY; Self::MIN_SLOTS],
            shift: 64 - Self::MIN_SLOTS.trailing_zeros(),
        }
    }

    /// Number of distinct keys seen.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys given ids `from..`, in id order.
    pub fn keys_from(&self, from: usize) -> &[u64] {
        &self.keys[from.min(self.keys.len())..]
    }

    /// The key that was given `id`.
    pub fn key(&self, id: u32) -> Option<u64> {
        self.keys.get(id as usize).copied()
    }

    /// Bytes held: the keys and the table.
    pub fn bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<u64>() + self.table.len() * std::mem::size_of::<u32>()
    }

    /// The slot holding `key`'s id, or the empty slot where it would go.
    #[inline]
    fn find(&self, key: u64) -> usize {
        let mask = self.table.len() - 1;
        let mut s = (key.wrapping_mul(GOLDEN) >> self.shift) as usize;
        loop {
            let id = self.table[s];
            if id == EMPTY || self.keys[id as usize] == key {
                return s;
            }
            s = (s + 1) & mask;
        }
    }

    /// The id of `key`, if seen.
    pub fn get(&self, key: u64) -> Option<u32> {
        let id = self.table[self.find(key)];
        (id != EMPTY).then_some(id)
    }

    /// The id of `key`, assigning the next free id if new.
    #[inline]
    pub fn id_of(&mut self, key: u64) -> Result<u32> {
        let s = self.find(key);
        if self.table[s] != EMPTY {
            return Ok(self.table[s]);
        }
        if self.keys.len() >= MAX_IDS {
            return Err(invalid(
                "trace",
                format!("more than {MAX_IDS} distinct keys"),
                "at most 2^32 - 2 distinct keys",
            ));
        }
        let id = self.keys.len() as u32;
        self.keys.push(key);
        self.table[s] = id;
        if self.keys.len() * 4 > self.table.len() * 3 {
            self.grow();
        }
        Ok(id)
    }

    /// Twice the slots, refilled from the keys in id order: the old table is freed first, so
    /// growing never holds two tables.
    #[cold]
    fn grow(&mut self) {
        let slots = self.table.len() * 2;
        self.table = Vec::new();
        self.table = vec![EMPTY; slots];
        self.shift = 64 - slots.trailing_zeros();
        for id in 0..self.keys.len() {
            let s = self.find(self.keys[id]);
            self.table[s] = id as u32;
        }
    }
}
