//! Memory latency by pointer chasing (lmbench `lat_mem_rd` style, with a random order).
//!
//! The working set is split into 64-byte lines linked into one random cycle; each load reads the
//! address of the next, so no two loads overlap and the hardware prefetcher cannot guess the
//! next line. Nanoseconds per load then step up as the working set outgrows L1, L2, L3 and the
//! TLB reach: the cache hierarchy of lecture section 4, measured.
//!
//! The cycle is Sattolo's algorithm driven by splitmix64 (`seed`), so the reference in Python
//! builds exactly the same cycle.

use super::sys::Mapping;
use crate::cancel::Cancel;
use crate::error::{invalid, Result};
use crate::hash::SplitMix64;
use std::time::Instant;

/// Bytes per link: one cache line.
pub const LINE: usize = 64;
const WORDS_PER_LINE: usize = LINE / 8;

/// `next[i]`: the line that follows line `i` in one random cycle through all `lines` lines
/// (Sattolo: for i from n-1 down to 1, swap item i with an item j < i). Progress: one unit a
/// line.
pub fn cycle(lines: usize, seed: u64, cancel: &Cancel) -> Result<Vec<u32>> {
    if !(2..=(u32::MAX as usize)).contains(&lines) {
        return Err(invalid("lines", lines, "from 2 to 2**32-1 lines"));
    }
    let mut next: Vec<u32> = (0..lines as u32).collect();
    let mut rng = SplitMix64(seed);
    cancel.plan(lines as u64 - 1);
    let mut end = lines;
    while end > 1 {
        cancel.check()?;
        let start = end.saturating_sub(1 << 16).max(1);
        for i in (start..end).rev() {
            let j = rng.below(i as u64) as usize;
            next.swap(i, j);
        }
        cancel.progress((end - start) as u64);
        end = start;
    }
    Ok(next)
}

/// Nanoseconds per dependent load over a working set of `bytes`, one figure per repeat.
/// With `huge_pages`, the working set is a fresh mapping advised `MADV_HUGEPAGE` (2 MiB pages
/// where the kernel grants them), which takes most TLB misses out of the figure: what is left
/// is the caches' own latency. Without, it is 4 KiB pages, as an ordinary allocation gets.
/// Each repeat first walks `min(lines, loads)` links untimed (to warm caches and TLB), then
/// times `loads` dependent loads.
pub fn latency(
    bytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
    huge_pages: bool,
    cancel: &Cancel,
) -> Result<Vec<f64>> {
    if !(2 * LINE as u64..=1 << 36).contains(&bytes) {
        return Err(invalid("nbytes", bytes, "a working set from 128 bytes to 64 GiB"));
    }
    if loads == 0 || loads > 1 << 36 {
        return Err(invalid("loads", loads, "from 1 to 2**36 loads"));
    }
    if repeats == 0 || repeats > 10_000 {
        return Err(invalid("repeats", repeats, "from 1 to 10,000"));
    }
    let lines = bytes as usize / LINE;
    let next = cycle(lines, seed, cancel)?;
    let map = Mapping::anonymous(lines * LINE, false, 0)?;
    if huge_pages {
        map.advise(libc::MADV_HUGEPAGE)?;
    } else {
        let _ = map.advise(libc::MADV_NOHUGEPAGE); // THP "always" would otherwise give huge pages
    }
    // SAFETY: the mapping is lines * LINE bytes, page aligned, zero-filled, and lives until the
    // end of this function; usize is 8 bytes on the 64-bit Linux targets this module builds for.
    let words: &mut [usize] = unsafe { std::slice::from_raw_parts_mut(map.ptr as *mut usize, lines * WORDS_PER_LINE) };
    for (i, &n) in next.iter().enumerate() {
        words[i * WORDS_PER_LINE] = n as usize * WORDS_PER_LINE;
    }
    drop(next);
    let mut out = Vec::with_capacity(repeats);
    let mut p = 0usize;
    const CHUNK: u64 = 1 << 20;
    for _ in 0..repeats {
        p = walk(words, p, (lines as u64).min(loads), cancel)?;
        let start = Instant::now();
        p = walk(words, p, loads, cancel)?;
        out.push(start.elapsed().as_nanos() as f64 / loads as f64);
    }
    std::hint::black_box(p);
    drop(map);
    return Ok(out);

    fn walk(words: &[usize], mut p: usize, loads: u64, cancel: &Cancel) -> Result<usize> {
        let mut left = loads;
        while left > 0 {
            cancel.check()?;
            let n = left.min(CHUNK);
            for _ in 0..n {
                // Every stored value is a valid index (a line start), so this never fails; a
                // checked load keeps the code free of `unsafe` at the cost of one compare.
                p = match words.get(p) {
                    Some(&q) => q,
                    None => return Err(invalid("words", p, "an index inside the working set")),
                };
            }
            left -= n;
        }
        Ok(p)
    }
}
