//! Trace generation, in chunks that stop on request: the Zipf and loop traces of
//! `osbench.traces`, fast enough for tens of millions of accesses and interruptible at any size.
//!
//! The Zipf trace keeps numpy's draws exactly: [`Pcg64`] is numpy's PCG64 bit generator
//! (`Generator.random` turns each 64-bit output into a double the same way), started from the
//! state Python's `default_rng(seed)` has, and each draw maps to the first key whose cumulative
//! weight exceeds it, as `numpy.searchsorted(cdf, u, side="right")` does. A guide table over
//! the CDF (Chen and Asau's cutpoint method) finds that key in about one step instead of a
//! binary search's twenty.

use crate::cancel::Cancel;
use crate::error::{invalid, Result};

/// Items generated between two looks at the cancel flag (well under a millisecond of work).
const CHUNK: usize = 1 << 16;

/// PCG64 (XSL-RR 128/64), as numpy's `PCG64` bit generator steps it: advance the 128-bit LCG,
/// then output the xor of its halves rotated by its top six bits.
#[derive(Clone, Debug)]
pub struct Pcg64 {
    state: u128,
    inc: u128,
}

const PCG_MULTIPLIER: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

impl Pcg64 {
    /// A generator at `state` with increment `inc`: numpy's `bit_generator.state["state"]`.
    pub fn new(state: u128, inc: u128) -> Self {
        Pcg64 { state, inc }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.inc);
        let hi = (self.state >> 64) as u64;
        let lo = self.state as u64;
        (hi ^ lo).rotate_right((hi >> 58) as u32)
    }

    /// A double in [0, 1), as numpy's `Generator.random`: the top 53 bits, scaled.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// A guide table over a CDF: `guide[j]` is the first index whose cumulative weight exceeds
/// `j / len`, so a draw `u` starts its search there, one or two steps from its answer.
struct Guide<'a> {
    cdf: &'a [f64],
    guide: Vec<u32>,
}

impl<'a> Guide<'a> {
    fn new(cdf: &'a [f64]) -> Result<Self> {
        let n = cdf.len();
        if n == 0 || n > u32::MAX as usize {
            return Err(invalid("cdf", format!("{n} weights"), format!("from 1 to {} weights", u32::MAX)));
        }
        if cdf.windows(2).any(|w| w[0] > w[1] || w[0].is_nan()) || !cdf[n - 1].is_finite() {
            return Err(invalid("cdf", "an array", "finite, non-decreasing cumulative weights"));
        }
        let mut guide = Vec::new();
        guide
            .try_reserve_exact(n)
            .map_err(|_| invalid("cdf", format!("{n} weights"), "a guide table that fits in memory"))?;
        let mut i = 0usize;
        for j in 0..n {
            let threshold = j as f64 / n as f64;
            while i < n - 1 && cdf[i] <= threshold {
                i += 1;
            }
            guide.push(i as u32);
        }
        Ok(Guide { cdf, guide })
    }

    /// The first index whose cumulative weight exceeds `u` (the last index if none does).
    #[inline]
    fn find(&self, u: f64) -> usize {
        let n = self.cdf.len();
        let j = ((u * n as f64) as usize).min(n - 1);
        let mut i = self.guide[j] as usize;
        // The guide is only a starting point: walk to the answer whichever side it is on, so
        // that a rounding in `u * n` can never change it.
        while i > 0 && self.cdf[i - 1] > u {
            i -= 1;
        }
        while i < n - 1 && self.cdf[i] <= u {
            i += 1;
        }
        i
    }
}

/// Zipf keys into `out`: each draw of `rng` mapped through `cdf` (the normalised cumulative
/// weights of the keys by rank). Equal to numpy's `minimum(searchsorted(cdf, rng.random(n),
/// side="right"), len(cdf) - 1)`.
pub fn zipf(cdf: &[f64], rng: &mut Pcg64, out: &mut [i64], cancel: &Cancel) -> Result<()> {
    let guide = Guide::new(cdf)?;
    cancel.plan(out.len() as u64);
    for chunk in out.chunks_mut(CHUNK) {
        for o in chunk.iter_mut() {
            *o = guide.find(rng.next_f64()) as i64;
        }
        cancel.advance(chunk.len() as u64)?;
    }
    Ok(())
}

/// 0, 1, ..., n_keys - 1, 0, 1, ... into `out`.
pub fn cyclic(n_keys: u64, out: &mut [i64], cancel: &Cancel) -> Result<()> {
    if n_keys == 0 || n_keys > i64::MAX as u64 {
        return Err(invalid("n_keys", n_keys, format!("from 1 to {}", i64::MAX)));
    }
    let mut key = 0u64;
    cancel.plan(out.len() as u64);
    for chunk in out.chunks_mut(CHUNK) {
        for o in chunk.iter_mut() {
            *o = key as i64;
            key += 1;
            if key == n_keys {
                key = 0;
            }
        }
        cancel.advance(chunk.len() as u64)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn never() -> Cancel {
        Cancel::new()
    }

    #[test]
    fn pcg64_matches_numpy() {
        // numpy: bit_generator.state = {"state": 1, "inc": 3}; random_raw(3).
        let mut g = Pcg64::new(1, 3);
        assert_eq!(
            [g.next_u64(), g.next_u64(), g.next_u64()],
            [0xec60e53261800aab, 0x3efb1c429cefd272, 0x05322331643ff3d4]
        );
        // numpy: default_rng(7).random(3), from the state default_rng(7) starts in.
        let mut g = Pcg64::new(208745520555909116978795849195383758904, 261136684632268670825940853076396136793);
        assert_eq!(
            [g.next_f64(), g.next_f64(), g.next_f64()],
            [0.625095466604667, 0.8972138009695755, 0.7756856902451935]
        );
    }

    #[test]
    fn the_guide_finds_what_a_binary_search_finds() {
        let weights: Vec<f64> = (1..=1000).map(|r| (r as f64).powf(-0.9)).collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf: Vec<f64> = weights
            .iter()
            .map(|w| {
                acc += w;
                acc / total
            })
            .collect();
        let guide = Guide::new(&cdf).unwrap();
        let mut g = Pcg64::new(12345, 6789);
        for _ in 0..100_000 {
            let u = g.next_f64();
            let by_search = cdf.partition_point(|&c| c <= u).min(cdf.len() - 1);
            assert_eq!(guide.find(u), by_search);
        }
        for u in [0.0, cdf[0], cdf[1], cdf[998], 1.0 - f64::EPSILON / 2.0] {
            assert_eq!(guide.find(u), cdf.partition_point(|&c| c <= u).min(cdf.len() - 1), "{u}");
        }
    }

    #[test]
    fn a_bad_cdf_is_refused_and_a_cancelled_run_stops() {
        let mut out = vec![0i64; 10];
        let mut g = Pcg64::new(1, 1);
        assert!(zipf(&[], &mut g, &mut out, &never()).is_err());
        assert!(zipf(&[0.5, 0.2, 1.0], &mut g, &mut out, &never()).is_err());
        assert!(zipf(&[0.5, f64::NAN], &mut g, &mut out, &never()).is_err());
        let stop = Cancel::raised();
        assert!(matches!(zipf(&[1.0], &mut g, &mut out, &stop), Err(Error::Interrupted)));
        assert!(matches!(cyclic(3, &mut out, &stop), Err(Error::Interrupted)));
    }

    #[test]
    fn cyclic_counts_round() {
        let mut out = vec![0i64; 7];
        cyclic(3, &mut out, &never()).unwrap();
        assert_eq!(out, [0, 1, 2, 0, 1, 2, 0]);
        assert!(cyclic(0, &mut out, &never()).is_err());
    }
}
