//! Trace generation, in chunks that stop on request: the Zipf, loop, scan and drift traces of
//! `osbench.traces`, fast enough for tens of millions of accesses and interruptible at any size.
//!
//! Every generator keeps numpy's draws exactly: `Generator.integers` is
//! [`Pcg64::bounded`] (numpy's Lemire rejection, on 32-bit draws when the range fits in 32
//! bits), `Generator.random` is [`Pcg64::next_f64`]. The Zipf trace: [`Pcg64`] is numpy's PCG64 bit generator
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
    /// The upper half of the last 64-bit output, kept for the next 32-bit draw (numpy's
    /// `has_uint32` / `uinteger`: two 32-bit draws share one 64-bit output).
    spare: Option<u32>,
}

const PCG_MULTIPLIER: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

impl Pcg64 {
    /// A generator at `state` with increment `inc`: numpy's `bit_generator.state["state"]`.
    /// A fresh generator (no 32-bit half kept), as `default_rng(seed)` starts.
    pub fn new(state: u128, inc: u128) -> Self {
        Pcg64 { state, inc, spare: None }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.inc);
        let hi = (self.state >> 64) as u64;
        let lo = self.state as u64;
        (hi ^ lo).rotate_right((hi >> 58) as u32)
    }

    /// A 32-bit draw, as numpy's `pcg64_next32`: the lower half of a fresh 64-bit output, the
    /// upper half kept for the next 32-bit draw.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if let Some(hi) = self.spare.take() {
            return hi;
        }
        let next = self.next_u64();
        self.spare = Some((next >> 32) as u32);
        next as u32
    }

    /// An integer in `0..=max`, as numpy's `Generator.integers(0, max + 1)` draws it
    /// (`random_bounded_uint64_fill` with Lemire's method, not the masked one): on 32-bit draws
    /// when `max` fits in 32 bits, else on 64-bit draws; no draw at all when `max` is 0.
    #[inline]
    pub fn bounded(&mut self, max: u64) -> u64 {
        if max == 0 {
            0
        } else if max == u32::MAX as u64 {
            self.next_u32() as u64
        } else if max < u32::MAX as u64 {
            let excl = max as u32 + 1;
            let mut m = self.next_u32() as u64 * excl as u64;
            if (m as u32) < excl {
                let threshold = (u32::MAX - max as u32) % excl;
                while (m as u32) < threshold {
                    m = self.next_u32() as u64 * excl as u64;
                }
            }
            m >> 32
        } else if max == u64::MAX {
            self.next_u64()
        } else {
            let excl = max + 1;
            let mut m = self.next_u64() as u128 * excl as u128;
            if (m as u64) < excl {
                let threshold = (u64::MAX - max) % excl;
                while (m as u64) < threshold {
                    m = self.next_u64() as u128 * excl as u128;
                }
            }
            (m >> 64) as u64
        }
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

/// A hot set polluted by scans into `out`: `period` accesses drawn uniformly from the `n_hot`
/// hot keys, then `scan_length` one-off keys counting up from `n_hot`, again and again. Equal to
/// `osbench.traces.scan`'s numpy loop (`rng.integers(0, n_hot, size=...)` per period).
pub fn scan(
    n_hot: u64,
    scan_length: u64,
    period: u64,
    rng: &mut Pcg64,
    out: &mut [i64],
    cancel: &Cancel,
) -> Result<()> {
    if n_hot == 0 || n_hot > i64::MAX as u64 {
        return Err(invalid("n_hot", n_hot, format!("from 1 to {}", i64::MAX)));
    }
    if period == 0 {
        return Err(invalid("period", period, "a positive number of accesses"));
    }
    let mut cold = n_hot; // the next one-off key
    let (mut in_hot, mut in_scan) = (period, 0u64);
    cancel.plan(out.len() as u64);
    for chunk in out.chunks_mut(CHUNK) {
        for o in chunk.iter_mut() {
            if in_hot == 0 && in_scan == 0 {
                in_hot = period;
            }
            if in_hot > 0 {
                *o = rng.bounded(n_hot - 1) as i64;
                in_hot -= 1;
                if in_hot == 0 {
                    in_scan = scan_length;
                }
            } else {
                // Counts up from n_hot <= i64::MAX by at most the trace's length: no overflow
                // below 2^63 accesses.
                *o = cold as i64;
                cold += 1;
                in_scan -= 1;
            }
        }
        cancel.advance(chunk.len() as u64)?;
    }
    Ok(())
}

/// The drift trace's shape: `phases` equal phases, each with its own `n_hot` hot keys taking a
/// share `p_hot` of the accesses, the rest going to all `n_keys`.
#[derive(Clone, Copy, Debug)]
pub struct Drift {
    pub n_keys: u64,
    pub n_hot: u64,
    pub phases: u64,
    pub p_hot: f64,
}

/// The hot set moves, into `out`: access `i` is in phase `min(i * phases / len, phases - 1)`
/// and goes, with probability `p_hot`, to a key drawn uniformly from that phase's own `n_hot`
/// keys, else to one drawn from all `n_keys`. Equal to `osbench.traces.drift`'s numpy code,
/// which draws all the hot keys, then all the others, then all the coins: so do these three
/// passes (`spare` holds the second pass's keys).
pub fn drift(shape: Drift, rng: &mut Pcg64, out: &mut [i64], spare: &mut [i64], cancel: &Cancel) -> Result<()> {
    let Drift { n_keys, n_hot, phases, p_hot } = shape;
    if n_hot == 0 || phases == 0 || n_hot.checked_mul(phases).is_none_or(|h| h > n_keys) || n_keys > i64::MAX as u64 {
        return Err(invalid(
            "n_hot*phases",
            format!("{n_hot}*{phases}"),
            format!("positive and at most n_keys={n_keys} (at most {})", i64::MAX),
        ));
    }
    if !(0.0..=1.0).contains(&p_hot) {
        return Err(invalid("p_hot", p_hot, "a probability in [0, 1]"));
    }
    if spare.len() != out.len() {
        return Err(invalid("spare", spare.len(), format!("{} keys, as many as out", out.len())));
    }
    let len = out.len() as u128;
    cancel.plan(3 * out.len() as u64);
    for (c, chunk) in out.chunks_mut(CHUNK).enumerate() {
        for (j, o) in chunk.iter_mut().enumerate() {
            let i = (c * CHUNK + j) as u128;
            let phase = (i * phases as u128 / len).min(phases as u128 - 1) as u64;
            *o = (phase * n_hot + rng.bounded(n_hot - 1)) as i64;
        }
        cancel.advance(chunk.len() as u64)?;
    }
    for chunk in spare.chunks_mut(CHUNK) {
        for o in chunk.iter_mut() {
            *o = rng.bounded(n_keys - 1) as i64;
        }
        cancel.advance(chunk.len() as u64)?;
    }
    for (chunk, others) in out.chunks_mut(CHUNK).zip(spare.chunks(CHUNK)) {
        for (o, &other) in chunk.iter_mut().zip(others) {
            if rng.next_f64() >= p_hot {
                *o = other;
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

    // numpy 2: g = default_rng(7); g.integers(0, 10, 5), g.integers(0, 2**40, 2), g.integers(0, 3, 3):
    // 32-bit draws (the fifth leaves a half kept), 64-bit draws (which do not use it), 32-bit again.
    const GOLDEN_SMALL: [u64; 5] = [9, 6, 6, 8, 5];
    const GOLDEN_WIDE: [u64; 2] = [247617924053, 330036320526];
    const GOLDEN_TINY: [u64; 3] = [2, 0, 2];

    #[test]
    fn bounded_draws_match_numpy() {
        let mut g = Pcg64::new(208745520555909116978795849195383758904, 261136684632268670825940853076396136793);
        let small: Vec<u64> = (0..5).map(|_| g.bounded(9)).collect();
        let wide: Vec<u64> = (0..2).map(|_| g.bounded((1 << 40) - 1)).collect();
        let tiny: Vec<u64> = (0..3).map(|_| g.bounded(2)).collect();
        assert_eq!((small, wide, tiny), (GOLDEN_SMALL.to_vec(), GOLDEN_WIDE.to_vec(), GOLDEN_TINY.to_vec()));
        assert_eq!(g.bounded(0), 0);
    }

    #[test]
    fn scan_and_drift_refuse_what_numpy_refuses_and_stop() {
        let mut out = vec![0i64; 10];
        let mut spare = vec![0i64; 10];
        let mut g = Pcg64::new(1, 1);
        assert!(scan(0, 1, 1, &mut g, &mut out, &never()).is_err());
        assert!(scan(1, 1, 0, &mut g, &mut out, &never()).is_err());
        assert!(drift(Drift { n_keys: 10, n_hot: 3, phases: 4, p_hot: 0.9 }, &mut g, &mut out, &mut spare, &never())
            .is_err());
        assert!(drift(Drift { n_keys: 10, n_hot: 3, phases: 3, p_hot: 1.5 }, &mut g, &mut out, &mut spare, &never())
            .is_err());
        let stop = Cancel::raised();
        assert!(matches!(scan(1, 1, 1, &mut g, &mut out, &stop), Err(Error::Interrupted)));
        assert!(matches!(
            drift(Drift { n_keys: 10, n_hot: 3, phases: 3, p_hot: 0.9 }, &mut g, &mut out, &mut spare, &stop),
            Err(Error::Interrupted)
        ));
        scan(1, 2, 3, &mut g, &mut out, &never()).unwrap();
        assert_eq!(out, [0, 0, 0, 1, 2, 0, 0, 0, 3, 4]);
    }

    #[test]
    fn cyclic_counts_round() {
        let mut out = vec![0i64; 7];
        cyclic(3, &mut out, &never()).unwrap();
        assert_eq!(out, [0, 1, 2, 0, 1, 2, 0]);
        assert!(cyclic(0, &mut out, &never()).is_err());
    }
}
