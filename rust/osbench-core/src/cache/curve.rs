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
//! Other policies, and every policy with object sizes, costs or an admission filter, replay
//! once per capacity, spread over threads.

use super::accesses::Accesses;
use super::admission::Admission;
use super::lookup::info;
use super::marks::{Marks, BLOCK_BITS};
use super::policy::Options;
use super::replay::{replay_grid, replay_grid_admitted};
use super::CHUNK;
use super::NEVER;
use crate::cancel::Cancel;
use crate::error::Result;

/// Above this largest capacity, OPT curves replay each capacity instead of walking the stack.
const OPT_STACK_MAX_DEPTH: u64 = 2048;

/// Hits of `policy` at each capacity (same order as `capacities`), from one pass where the
/// policy is a stack algorithm and the accesses are unweighted, else from one replay per
/// capacity on `threads` threads.
pub fn curve(
    policy: &str,
    accesses: &Accesses<'_>,
    capacities: &[u64],
    options: Options,
    threads: usize,
    cancel: &Cancel,
) -> Result<Vec<u64>> {
    curve_admitted(policy, accesses, capacities, options, None, threads, cancel)
}

/// [`curve()`] behind an admission filter, if `admission` names one: one replay per capacity,
/// each with its own fresh filter (a filter breaks the inclusion property of stack algorithms,
/// and AdaptSize tunes itself to the capacity).
pub fn curve_admitted(
    policy: &str,
    accesses: &Accesses<'_>,
    capacities: &[u64],
    options: Options,
    admission: Option<&Admission>,
    threads: usize,
    cancel: &Cancel,
) -> Result<Vec<u64>> {
    let info = info(policy)?;
    let resolved = info.resolve(&options)?;
    capacities.iter().try_for_each(|&c| info.check_capacity("capacities", c, &resolved))?;
    info.check_accesses(accesses)?;
    let depth = capacities.iter().copied().max().unwrap_or(0).min(accesses.n_ids() as u64);
    match info.name {
        _ if admission.is_some() => {
            let cells: Vec<(&str, u64)> = capacities.iter().map(|&c| (info.name, c)).collect();
            replay_grid_admitted(&cells, accesses, options, admission, threads, cancel)
        }
        "lru" if !accesses.weighted() => lru_hits(accesses, capacities, cancel),
        "opt" if !accesses.weighted() && depth <= OPT_STACK_MAX_DEPTH => opt_hits(accesses, capacities, cancel),
        _ => {
            let cells: Vec<(&str, u64)> = capacities.iter().map(|&c| (info.name, c)).collect();
            replay_grid(&cells, accesses, options, threads, cancel)
        }
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
pub fn lru_hits(accesses: &Accesses<'_>, capacities: &[u64], cancel: &Cancel) -> Result<Vec<u64>> {
    let (ids, n_ids) = (accesses.ids(), accesses.n_ids());
    let depth = capacities.iter().copied().max().unwrap_or(0).min(n_ids as u64) as usize;
    let mut hist = vec![0u64; depth];
    let window = 2 * n_ids + BLOCK_BITS;
    let mut marks = Marks::new(window);
    let mut at = vec![u32::MAX; window]; // time -> id whose mark may be there
    let mut last = vec![u32::MAX; n_ids]; // id -> time of its mark, MAX = never seen
    let mut t = 0usize;
    cancel.plan(ids.len() as u64);
    cancel.check()?;
    for chunk in ids.chunks(CHUNK) {
        for &id in chunk {
            let id_usize = id as usize;
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
        cancel.advance(chunk.len() as u64)?;
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
fn opt_hits(accesses: &Accesses<'_>, capacities: &[u64], cancel: &Cancel) -> Result<Vec<u64>> {
    let (ids, n_ids, next_use) = (accesses.ids(), accesses.n_ids(), accesses.next_use().unwrap_or(&[]));
    let depth = capacities.iter().copied().max().unwrap_or(0).min(n_ids as u64) as usize;
    let mut hist = vec![0u64; depth];
    let mut stack: Vec<u32> = Vec::with_capacity(depth);
    let mut next = vec![NEVER; n_ids];
    // An access may walk the whole stack: chunks of about CHUNK steps of the walk.
    let chunk = (CHUNK / depth.max(1)).max(1);
    cancel.plan(ids.len() as u64);
    cancel.check()?;
    for (ids, next_use) in ids.chunks(chunk).zip(next_use.chunks(chunk)) {
        for (&x, &nx) in ids.iter().zip(next_use) {
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
        cancel.advance(ids.len() as u64)?;
    }
    Ok(hits_from_histogram(&hist, capacities))
}
