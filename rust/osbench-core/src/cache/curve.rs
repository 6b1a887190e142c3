//! Hit counts at many capacities.
//!
//! LRU and OPT are stack algorithms (Mattson et al. 1970): the content of a cache of size c is
//! always a subset of the content at size c+1, so each access has a stack distance d and hits
//! at every capacity >= d. One pass gives the whole curve:
//! - LRU: d - 1 is the number of distinct ids accessed since the last access to this id,
//!   counted with a bitmap and a Fenwick tree over access times (O(N log N)).
//! - OPT: Mattson's priority stack with "next use" as the priority, truncated at the largest
//!   capacity asked for (O(N x depth)); for very large capacities per-capacity replays in
//!   parallel are faster, and give the same numbers.
//!
//! Other policies replay once per capacity, spread over threads.

use super::marks::{Marks, BLOCK_BITS};
use super::{AnyPolicy, Options, NEVER};
use crate::error::{invalid, Error, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many accesses run between two looks at the cancel flag.
pub const CHUNK: usize = 1 << 16;

/// Above this largest capacity, OPT curves replay each capacity instead of walking the stack.
const OPT_STACK_MAX_DEPTH: u64 = 2048;

fn check(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// Replay `ids` through `policy`, looking at `cancel` between chunks. `sizes` holds one object
/// size per access (capacity in bytes), or is empty for unit sizes; `costs` one cost per
/// access (GDSF only), or is empty for none. See [`AnyPolicy::replay_chunk`].
pub fn replay_cancellable(
    policy: &mut AnyPolicy,
    ids: &[u32],
    sizes: &[u64],
    costs: &[f64],
    next_use: &[u64],
    mask: &mut [bool],
    cancel: &AtomicBool,
) -> Result<u64> {
    if !sizes.is_empty() && sizes.len() != ids.len() {
        return Err(invalid(
            "sizes",
            format!("{} entries", sizes.len()),
            format!("{} entries, one per access", ids.len()),
        ));
    }
    if !costs.is_empty() && costs.len() != ids.len() {
        return Err(invalid(
            "costs",
            format!("{} entries", costs.len()),
            format!("{} entries, one per access", ids.len()),
        ));
    }
    // The part of an optional per-access slice that belongs to accesses start..end.
    fn part<T>(v: &[T], start: usize, end: usize) -> &[T] {
        if v.is_empty() {
            v
        } else {
            v.get(start..end).unwrap_or(&[])
        }
    }
    let mut hits = 0;
    for (start, chunk) in (0..ids.len()).step_by(CHUNK).zip(ids.chunks(CHUNK)) {
        check(cancel)?;
        let end = start + chunk.len();
        let (next, size, cost) = (part(next_use, start, end), part(sizes, start, end), part(costs, start, end));
        let m = if mask.is_empty() { &mut [][..] } else { mask.get_mut(start..end).unwrap_or(&mut []) };
        hits += if !costs.is_empty() {
            policy.replay_chunk_costed(chunk, size, cost, m)?
        } else if !sizes.is_empty() {
            policy.replay_chunk_sized(chunk, size, next, m)?
        } else {
            policy.replay_chunk(chunk, next, m)?
        };
    }
    Ok(hits)
}

/// Every capacity must be positive (`unit` names what it counts, for the message).
fn check_capacities(capacities: &[u64], unit: &str) -> Result<()> {
    match capacities.iter().find(|&&c| c == 0) {
        Some(&c) => Err(invalid("capacities", c, format!("positive numbers of {unit}"))),
        None => Ok(()),
    }
}

/// Hits at each capacity (in bytes) with per-access object sizes: one replay per capacity.
#[allow(clippy::too_many_arguments)]
pub fn curve_sized(
    policy: &str,
    ids: &[u32],
    n_ids: usize,
    sizes: &[u64],
    next_use: &[u64],
    capacities: &[u64],
    options: Options,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<u64>> {
    check_capacities(capacities, "bytes")?;
    replay_each(policy, ids, n_ids, sizes, &[], next_use, capacities, options, threads, cancel)
}

/// Hits at each capacity with one cost per access (GDSF), and optionally one size per access
/// (capacities then count bytes): one replay per capacity.
#[allow(clippy::too_many_arguments)]
pub fn curve_costed(
    policy: &str,
    ids: &[u32],
    n_ids: usize,
    sizes: &[u64],
    costs: &[f64],
    capacities: &[u64],
    options: Options,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<u64>> {
    check_capacities(capacities, if sizes.is_empty() { "objects" } else { "bytes" })?;
    replay_each(policy, ids, n_ids, sizes, costs, &[], capacities, options, threads, cancel)
}

/// Hits of `policy` at each capacity (same order as `capacities`).
#[allow(clippy::too_many_arguments)] // until the accesses view carries ids, sizes and next use together
pub fn curve(
    policy: &str,
    ids: &[u32],
    n_ids: usize,
    next_use: &[u64],
    capacities: &[u64],
    options: Options,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<u64>> {
    check_capacities(capacities, "objects")?;
    // Validate the name (and get the error message) before any work.
    AnyPolicy::new(policy, super::min_capacity(policy), 0, options)?;
    let max_cap = capacities.iter().copied().max().unwrap_or(0);
    match policy {
        "lru" => lru_hits(ids, n_ids, capacities, cancel),
        "opt" if max_cap.min(n_ids as u64) <= OPT_STACK_MAX_DEPTH => opt_hits(ids, n_ids, next_use, capacities, cancel),
        _ => replay_each(policy, ids, n_ids, &[], &[], next_use, capacities, options, threads, cancel),
    }
}

/// Turn a histogram of stack distances (index d-1, depth capped at `hist.len()`) into hits per capacity.
fn hits_from_histogram(hist: &[u64], capacities: &[u64]) -> Vec<u64> {
    let mut cumulative = Vec::with_capacity(hist.len() + 1);
    cumulative.push(0u64);
    for &h in hist {
        cumulative.push(cumulative.last().copied().unwrap_or(0) + h);
    }
    capacities.iter().map(|&c| cumulative[(c.min(hist.len() as u64)) as usize]).collect()
}

/// LRU stack distances.
///
/// Each id keeps one mark at the time of its last access; the distance of an access is the
/// number of marks after the previous access to the same id, counted by [`Marks`]. Times
/// are renumbered (compacted) whenever they reach the window size, so the
/// window stays about 2 x n_ids long.
pub fn lru_hits(ids: &[u32], n_ids: usize, capacities: &[u64], cancel: &AtomicBool) -> Result<Vec<u64>> {
    let depth = capacities.iter().copied().max().unwrap_or(0).min(n_ids as u64) as usize;
    let mut hist = vec![0u64; depth];
    let window = 2 * n_ids + BLOCK_BITS;
    let mut marks = Marks::new(window);
    let mut at = vec![u32::MAX; window]; // time -> id whose mark may be there
    let mut last = vec![u32::MAX; n_ids]; // id -> time of its mark, MAX = never seen
    let mut t = 0usize;

    for (k, &id) in ids.iter().enumerate() {
        if k % CHUNK == 0 {
            check(cancel)?;
        }
        let id_usize = id as usize;
        if id_usize >= n_ids {
            return Err(invalid("ids", id, format!("ids below n_ids={n_ids}")));
        }
        if t == window {
            t = compact(&mut marks, &mut at, &mut last, t);
        }
        let p = last[id_usize];
        if p != u32::MAX {
            let p = p as usize;
            // marks strictly after p: distinct other ids since, i.e. stack depth - 1
            let distance = (marks.live - marks.count_through(p)) as usize;
            if distance < depth {
                hist[distance] += 1;
            }
            marks.clear(p);
        }
        marks.set(t);
        at[t] = id;
        last[id_usize] = t as u32;
        t += 1;
    }
    Ok(hits_from_histogram(&hist, capacities))
}

/// Renumber live marks to times 0..live in their order; returns the next time.
fn compact(marks: &mut Marks, at: &mut [u32], last: &mut [u32], t: usize) -> usize {
    let mut next = 0usize;
    for old in 0..t {
        let id = at[old];
        if id != u32::MAX && last[id as usize] as usize == old {
            at[next] = id;
            last[id as usize] = next as u32;
            next += 1;
        }
    }
    at[next..].iter_mut().for_each(|slot| *slot = u32::MAX);
    marks.reset_to_prefix(next);
    next
}

/// OPT stack distances: Mattson's priority stack, where the priority of an object is its next
/// use (sooner = higher). On an access the object goes on top; the old top is carried down
/// and at each level the carried object and the resident one are compared: the one needed
/// sooner stays, the other is carried on, until the accessed object's old level (a hit at that
/// depth) or the bottom (a miss at every capacity).
pub fn opt_hits(
    ids: &[u32],
    n_ids: usize,
    next_use: &[u64],
    capacities: &[u64],
    cancel: &AtomicBool,
) -> Result<Vec<u64>> {
    if next_use.len() != ids.len() {
        return Err(invalid(
            "next_use",
            format!("{} entries", next_use.len()),
            format!("{} entries, one per access", ids.len()),
        ));
    }
    let depth = capacities.iter().copied().max().unwrap_or(0).min(n_ids as u64) as usize;
    let mut hist = vec![0u64; depth];
    let mut stack: Vec<u32> = Vec::with_capacity(depth);
    let mut next = vec![NEVER; n_ids];
    for (k, (&x, &nx)) in ids.iter().zip(next_use).enumerate() {
        if k % CHUNK == 0 {
            check(cancel)?;
        }
        if x as usize >= n_ids {
            return Err(invalid("ids", x, format!("ids below n_ids={n_ids}")));
        }
        next[x as usize] = nx;
        if stack.first() == Some(&x) {
            hist[0] += 1;
            continue;
        }
        let Some(&top) = stack.first() else {
            stack.push(x);
            continue;
        };
        stack[0] = x;
        let mut carried = top;
        let mut found = false;
        for (level, resident) in stack.iter_mut().enumerate().skip(1) {
            if *resident == x {
                *resident = carried;
                hist[level] += 1;
                found = true;
                break;
            }
            if next[carried as usize] < next[*resident as usize] {
                std::mem::swap(&mut carried, resident);
            }
        }
        if !found && stack.len() < depth {
            stack.push(carried);
        }
    }
    Ok(hits_from_histogram(&hist, capacities))
}

/// One replay per capacity, spread over `threads` threads (`sizes`, `costs`: as in
/// [`replay_cancellable`]).
#[allow(clippy::too_many_arguments)]
pub fn replay_each(
    policy: &str,
    ids: &[u32],
    n_ids: usize,
    sizes: &[u64],
    costs: &[f64],
    next_use: &[u64],
    capacities: &[u64],
    options: Options,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<u64>> {
    let next_index = AtomicUsize::new(0);
    let mut results: Vec<Result<u64>> = (0..capacities.len()).map(|_| Ok(0)).collect();
    let slots: Vec<std::sync::Mutex<&mut Result<u64>>> = results.iter_mut().map(std::sync::Mutex::new).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, capacities.len().max(1)) {
            scope.spawn(|| loop {
                let i = next_index.fetch_add(1, Ordering::Relaxed);
                if i >= capacities.len() {
                    break;
                }
                let r = AnyPolicy::new(policy, capacities[i], n_ids, options)
                    .and_then(|mut p| replay_cancellable(&mut p, ids, sizes, costs, next_use, &mut [], cancel));
                if let Ok(mut slot) = slots[i].lock() {
                    **slot = r;
                }
            });
        }
    });
    drop(slots);
    results.into_iter().collect()
}
