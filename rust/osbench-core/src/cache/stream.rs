//! Streaming replay: a trace larger than memory goes through one policy chunk by chunk.
//!
//! A [`Stream`] keeps what must outlive a chunk, the key -> dense id map and the policy, so
//! feeding a trace in pieces gives exactly the hits of one replay of the whole. Memory is the
//! policy's state (proportional to the capacity, plus a few bytes a distinct key for the
//! per-id arrays) and the compact key map (13 to 19 bytes a distinct key), not the trace:
//! each chunk is taken [`CHUNK`] accesses at a time, with a look at the cancel flag between
//! them, whatever its length.
//!
//! An offline policy (OPT) is given each access's next use by the caller (a file's
//! `next_access` field); the stream checks it against the keys it sees ([`Promises`]), so a
//! file whose next uses disagree with its keys is refused instead of replayed wrongly.

use super::accesses::Accesses;
use super::admission::{Admission, AnyFilter};
use super::keys::CompactKeyMap;
use super::policy::ensure;
use super::CHUNK;
use super::{AnyPolicy, Options, NEVER};
use crate::cancel::Cancel;
use crate::error::{check_len, invalid, Result};

pub struct Stream {
    map: CompactKeyMap,
    policy: AnyPolicy,
    /// The admission filter the cache sits behind, if any.
    filter: Option<AnyFilter>,
    /// The next uses of an offline policy, checked against the keys.
    promises: Option<Promises>,
    /// Per-run buffers ([`CHUNK`] entries at most), kept to avoid reallocating.
    ids: Vec<u32>,
    next: Vec<u64>,
    accesses: u64,
    hits: u64,
    /// Whether chunks come with sizes (set by the first non-empty chunk).
    sized: Option<bool>,
    /// The access (counted from the start of the stream) whose data was refused, if any.
    bad_access: Option<u64>,
}

impl Stream {
    pub fn new(name: &str, capacity: u64, options: Options) -> Result<Stream> {
        Stream::admitted(name, capacity, options, None)
    }

    /// [`Stream::new`] behind an admission filter, if `admission` names one.
    pub fn admitted(name: &str, capacity: u64, options: Options, admission: Option<&Admission>) -> Result<Stream> {
        let policy = AnyPolicy::new(name, capacity, 0, options)?;
        let filter = admission.map(|a| a.build(capacity, 0)).transpose()?;
        let promises = policy.info().offline.then(Promises::default);
        Ok(Stream {
            map: CompactKeyMap::new(),
            policy,
            filter,
            promises,
            ids: Vec::new(),
            next: Vec::new(),
            accesses: 0,
            hits: 0,
            sized: None,
            bad_access: None,
        })
    }

    /// True when the policy needs each access's next use (an offline policy).
    pub fn needs_future(&self) -> bool {
        self.promises.is_some()
    }

    /// Replay the next chunk of the trace (keys as 64-bit patterns); returns its hits.
    ///
    /// `next_access[i]` is the time of the next access to `keys[i]` on a clock that counts
    /// accesses from the start of the stream with a fixed offset (osbench writes the access
    /// index, libCacheSim the index + 1), negative for never; offline policies need it, and a
    /// value that disagrees with the keys is refused ([`Stream::bad_access`] says where).
    /// `sizes` gives each access's object size (capacity in bytes); a stream is fed sizes
    /// always or never. Lengths and sizes are checked before any access is replayed.
    pub fn feed(
        &mut self,
        keys: &[u64],
        next_access: Option<&[i64]>,
        sizes: Option<&[u64]>,
        cancel: &Cancel,
    ) -> Result<u64> {
        if !keys.is_empty() {
            let sized = sizes.is_some();
            match self.sized {
                Some(s) if s != sized => {
                    return Err(invalid(
                        "sizes",
                        if sized { "given" } else { "missing" },
                        "sizes on every chunk or on none",
                    ))
                }
                _ => self.sized = Some(sized),
            }
        }
        let next_access = match (&self.promises, next_access) {
            (Some(_), next) => {
                let next = next.unwrap_or(&[]);
                check_len("next_access", next.len(), keys.len(), "key (the policy needs each access's next use)")?;
                next
            }
            (None, _) => &[][..],
        };
        if let Some(sizes) = sizes {
            check_len("sizes", sizes.len(), keys.len(), "key")?;
            if let Some(i) = sizes.iter().position(|&s| s == 0) {
                self.bad_access = Some(self.accesses + i as u64);
                return Err(invalid("sizes", format!("0 at access {}", self.accesses + i as u64), "positive sizes"));
            }
        }
        let mut hits = 0;
        cancel.plan(keys.len() as u64);
        for start in (0..keys.len()).step_by(CHUNK) {
            cancel.check()?;
            let end = keys.len().min(start + CHUNK);
            hits += self.run(&keys[start..end], next_access.get(start..end), sizes.map(|s| &s[start..end]), cancel)?;
        }
        Ok(hits)
    }

    /// One run of at most [`CHUNK`] accesses (lengths checked by [`Stream::feed`]).
    fn run(&mut self, keys: &[u64], next: Option<&[i64]>, sizes: Option<&[u64]>, cancel: &Cancel) -> Result<u64> {
        self.ids.clear();
        let known = self.map.len();
        for &k in keys {
            self.ids.push(self.map.id_of(k)?);
        }
        if self.map.len() > known {
            self.policy.learn_keys(known as u32, self.map.keys_from(known));
        }
        self.next.clear();
        if let (Some(promises), Some(next)) = (&mut self.promises, next) {
            for (i, (&id, &n)) in self.ids.iter().zip(next).enumerate() {
                let at = self.accesses + i as u64;
                match promises.check(id, at, n) {
                    Ok(next_use) => self.next.push(next_use),
                    Err(e) => {
                        self.bad_access = Some(at);
                        return Err(e);
                    }
                }
            }
        }
        let mut accesses = Accesses::new(&self.ids, self.map.len())?;
        if let Some(sizes) = sizes {
            accesses = accesses.with_sizes(sizes)?;
        }
        if self.promises.is_some() {
            accesses = accesses.with_next_use(&self.next)?;
        }
        let hits = self.policy.replay_planned(&accesses, &mut [], self.filter.as_mut(), cancel)?;
        self.accesses += keys.len() as u64;
        self.hits += hits;
        Ok(hits)
    }

    /// The end of the stream: an offline policy's next uses must all have come true (an access
    /// promised after the last one is refused, naming its key).
    pub fn finish(&self) -> Result<()> {
        match &self.promises {
            Some(p) => p.finish(&self.map, self.accesses),
            None => Ok(()),
        }
    }

    pub fn accesses(&self) -> u64 {
        self.accesses
    }
    pub fn hits(&self) -> u64 {
        self.hits
    }
    /// Distinct keys seen so far.
    pub fn n_distinct(&self) -> usize {
        self.map.len()
    }
    /// The access (from the start of the stream) whose next use or size was refused, if any.
    pub fn bad_access(&self) -> Option<u64> {
        self.bad_access
    }
    /// Bytes held by the key map.
    pub fn key_map_bytes(&self) -> usize {
        self.map.bytes()
    }
}

/// What an access's next use says about the stream, checked as the stream goes: each key's
/// latest promise (the time of its next access, or never), and the clock's offset from the
/// access index, fixed by the first key that comes back.
#[derive(Default)]
struct Promises {
    /// By id: the time promised for the key's next access; UNSEEN before its first access,
    /// NEVER_AGAIN after an access that said never.
    promised: Vec<i64>,
    offset: Option<i64>,
    /// Keys whose promised access has not come yet.
    pending: u64,
}

/// `promised[id]` of a key not yet seen, and of one whose last access said never.
const UNSEEN: i64 = i64::MIN;
const NEVER_AGAIN: i64 = -1;

impl Promises {
    /// Access `at` of `id`, whose next use is `next` (negative: never): it must be the access
    /// the key's previous one promised, and promise an access after itself. Returns the next
    /// use for the policy.
    fn check(&mut self, id: u32, at: u64, next: i64) -> Result<u64> {
        ensure(&mut self.promised, id, UNSEEN);
        let before = self.promised[id as usize];
        let at = at as i64;
        if before == NEVER_AGAIN {
            return Err(invalid(
                "next_access",
                format!("-1 (never) at the previous access of the key that comes back at access {at}"),
                "the time of the key's next access",
            ));
        }
        if before != UNSEEN {
            let offset = *self.offset.get_or_insert(before.wrapping_sub(at));
            if before.wrapping_sub(offset) != at {
                return Err(invalid(
                    "next_access",
                    format!("{before} at the previous access of the key that comes back at access {at}"),
                    format!("{} (the access index + {offset}, as the earlier records count)", at.wrapping_add(offset)),
                ));
            }
            self.pending -= 1;
        }
        if next < 0 {
            self.promised[id as usize] = NEVER_AGAIN;
            return Ok(NEVER);
        }
        if let Some(offset) = self.offset {
            if next.wrapping_sub(offset) <= at {
                return Err(invalid(
                    "next_access",
                    format!("{next} at access {at}"),
                    format!("a later access: above {} (the access index + {offset})", at.wrapping_add(offset)),
                ));
            }
        }
        self.promised[id as usize] = next;
        self.pending += 1;
        Ok(next as u64)
    }

    /// Every promise kept by the end (`accesses` in all)?
    fn finish(&self, map: &CompactKeyMap, accesses: u64) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        let (id, &time) = self.promised.iter().enumerate().find(|&(_, &t)| t >= 0).unwrap_or((0, &0));
        let key = map.key(id as u32).unwrap_or(0);
        Err(invalid(
            "next_access",
            format!("{time} for key {key}, which never comes back ({} such keys)", self.pending),
            format!("-1 at each key's last access: the trace ends after access {}", accesses.saturating_sub(1)),
        ))
    }
}
