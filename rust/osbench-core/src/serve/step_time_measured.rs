//! The measured step time (`python/osbench/serve/measured.py: seconds`): per-token and
//! per-request costs and two attention grids, built once in Python from the GPU's measured
//! kernel tables and passed in as arrays; a step is read from them with the same floating-point
//! operations in the same order, so the times are bit-equal to the reference.

use super::step_time_batch::{Batch, Chunk};
use crate::error::{invalid, Result};

/// A grid of seconds over (batch, length), row-major, complete (`kernels.py: Grid`).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub rows: Vec<f64>,
    pub cols: Vec<f64>,
    pub values: Vec<f64>,
}

/// What the prefill and decode attention work of a length `s` is, for reading beyond a grid's
/// longest length (`kernels.py: prefill_work`, `decode_work`), under a sliding window of that
/// many tokens (0: full attention).
#[derive(Debug, Clone, Copy)]
enum Work {
    Prefill(u64),
    Decode(u64),
}

impl Work {
    #[inline]
    fn of(self, s: f64) -> f64 {
        match self {
            Work::Prefill(0) => s * (s + 1.0) / 2.0,
            Work::Prefill(w) => {
                let w = w as f64;
                if s <= w {
                    s * (s + 1.0) / 2.0
                } else {
                    w * (w + 1.0) / 2.0 + (s - w) * w
                }
            }
            Work::Decode(0) => s + 1.0,
            Work::Decode(w) => (s + 1.0).min(w as f64),
        }
    }
}

/// `kernels.py: prefill_pairs`: the query-key pairs a chunk of `n` new tokens after `c` cached
/// ones computes under a window of `w` tokens (0: full attention), exactly. Python computes
/// them on unbounded integers; in range for any step the engine forms.
fn prefill_pairs(n: u128, c: u128, w: u128) -> u128 {
    if w == 0 {
        return n * c + n * (n + 1) / 2;
    }
    let pairs = |s: u128| if s <= w { s * (s + 1) / 2 } else { w * (w + 1) / 2 + (s - w) * w };
    pairs(c + n) - pairs(c)
}

impl Grid {
    /// A grid of at least two rows and two columns, each axis increasing, one finite value
    /// `>= 0` per cell.
    pub fn new(name: &'static str, rows: Vec<f64>, cols: Vec<f64>, values: Vec<f64>) -> Result<Self> {
        let increasing = |a: &[f64]| a.len() >= 2 && a.windows(2).all(|w| w[0] < w[1]) && a[0] >= 0.0;
        if !increasing(&rows) || !increasing(&cols) || values.len() != rows.len() * cols.len() {
            return Err(invalid(
                name,
                format!("{} rows, {} columns, {} values", rows.len(), cols.len(), values.len()),
                "a grid: two increasing axes of at least two points and one value per cell",
            ));
        }
        if !values.iter().all(|v| v.is_finite() && *v >= 0.0) {
            return Err(invalid(name, "a value", "finite seconds >= 0 in every cell"));
        }
        Ok(Grid { rows, cols, values })
    }

    /// `kernels.py: bilinear`: linear in batch and in length, in proportion to the batch beyond
    /// the last row.
    fn bilinear(&self, mut b: f64, s: f64) -> f64 {
        let (nr, nc) = (self.rows.len(), self.cols.len());
        let mut scale = 1.0;
        if b > self.rows[nr - 1] {
            scale = b / self.rows[nr - 1];
            b = self.rows[nr - 1];
        }
        // Python's bisect_right(a, x) - 1, kept within the grid's cells.
        let i = self.rows.partition_point(|&r| r <= b).saturating_sub(1).min(nr - 2);
        let j = self.cols.partition_point(|&c| c <= s).saturating_sub(1).min(nc - 2);
        let wb = (b - self.rows[i]) / (self.rows[i + 1] - self.rows[i]);
        let ws = (s - self.cols[j]) / (self.cols[j + 1] - self.cols[j]);
        let v = &self.values;
        let (v00, v01) = (v[i * nc + j], v[i * nc + j + 1]);
        let (v10, v11) = (v[(i + 1) * nc + j], v[(i + 1) * nc + j + 1]);
        let low = v00 + ws * (v01 - v00);
        let high = v10 + ws * (v11 - v10);
        (low + wb * (high - low)) * scale
    }

    /// `measured.py: _read`: below the first length read there; beyond the last, in
    /// proportion to the attention work.
    fn read(&self, batch: u64, mut s: f64, work: Work) -> f64 {
        let last = self.cols[self.cols.len() - 1];
        if s < self.cols[0] {
            s = self.cols[0];
        }
        if s > last {
            return self.bilinear(batch as f64, last) * (work.of(s) / work.of(last));
        }
        self.bilinear(batch as f64, s)
    }
}

/// `measured.py: AttentionTables`: one kind of layer's attention grids (its layers multiplied
/// in) under a sliding window of `window` tokens (0: full attention).
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    pub window: u64,
    pub context: Grid,
    pub generation: Grid,
}

/// `measured.py: MeasuredTables`.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub host_step: f64,
    /// Seconds by the step's new tokens (index 0 unused).
    pub tokens: Vec<f64>,
    /// Seconds by the step's scheduled requests (index 0 unused).
    pub seqs: Vec<f64>,
    /// The full-attention layers' grids, then the windowed layers' if any.
    pub attention: Vec<Attention>,
}

impl Measured {
    /// The tables, checked: finite costs `>= 0`, as many request counts as token counts (a step
    /// never schedules more requests than tokens), one to four kinds of attention layer.
    pub fn new(host_step: f64, tokens: Vec<f64>, seqs: Vec<f64>, attention: Vec<Attention>) -> Result<Self> {
        if !(host_step.is_finite() && host_step >= 0.0) {
            return Err(invalid("host_step", format!("{host_step}"), "finite seconds >= 0"));
        }
        for (name, a) in [("tokens", &tokens), ("seqs", &seqs)] {
            if a.len() < 2 || !a.iter().all(|v| v.is_finite() && *v >= 0.0) {
                return Err(invalid(name, format!("{} values", a.len()), "at least two finite seconds >= 0"));
            }
        }
        if seqs.len() != tokens.len() {
            return Err(invalid(
                "seqs",
                format!("{} values", seqs.len()),
                format!("{} (one per token count)", tokens.len()),
            ));
        }
        if attention.is_empty() || attention.len() > 4 {
            return Err(invalid(
                "attention",
                format!("{} kinds of layer", attention.len()),
                "one to four kinds of attention layer",
            ));
        }
        Ok(Measured { host_step, tokens, seqs, attention })
    }

    /// The most new tokens a step may have.
    pub fn max_tokens(&self) -> u64 {
        self.tokens.len() as u64 - 1
    }

    /// The step's seconds (`measured.py: seconds`), its prefill requests being `chunks`:
    /// `(new tokens, tokens cached before the step)` each, in scheduling order.
    pub fn seconds(&self, b: &Batch, chunks: &[Chunk]) -> Result<f64> {
        let new = b.prefill_tokens + b.decode_seqs;
        if new > self.max_tokens() {
            return Err(invalid(
                "tokens",
                new.to_string(),
                format!(
                    "at most {} tokens per step, the most the GEMM tables measure; use max_num_batched_tokens of \
                     at most that",
                    self.max_tokens()
                ),
            ));
        }
        if b.num_seqs as usize >= self.seqs.len() {
            return Err(invalid(
                "num_seqs",
                b.num_seqs.to_string(),
                format!("below {}, the most requests a step of the tables may have", self.seqs.len()),
            ));
        }
        let (mut prefill_context, mut chunk_tokens) = (0_u64, 0_u64);
        for &(n, c) in chunks {
            prefill_context = prefill_context.saturating_add(c);
            chunk_tokens = chunk_tokens.saturating_add(n);
        }
        if chunks.len() as u64 != b.prefill_seqs
            || chunk_tokens != b.prefill_tokens
            || prefill_context > b.context_tokens
        {
            return Err(invalid(
                "prefill_chunks",
                format!("{} chunks of {chunk_tokens} new tokens over {prefill_context} cached", chunks.len()),
                format!(
                    "one (new, cached) per prefill request: {} chunks of {} new tokens over at most {} cached",
                    b.prefill_seqs, b.prefill_tokens, b.context_tokens
                ),
            ));
        }
        let mut total = self.host_step + self.tokens[new as usize] + self.seqs[b.num_seqs as usize];
        let decode_context = b.context_tokens - prefill_context;
        let p = chunks.len() as u64;
        // One mean context for every kind of layer (read only when some request decodes).
        let decode_mean = if b.decode_seqs > 0 { decode_context as f64 / b.decode_seqs as f64 } else { 0.0 };
        for a in &self.attention {
            if b.decode_seqs > 0 {
                total += a.generation.read(b.decode_seqs, decode_mean, Work::Decode(a.window));
            }
            for &(n, c) in chunks {
                let s = (c as u128 + n as u128) as f64;
                let pairs = prefill_pairs(n as u128, c as u128, a.window as u128) as f64;
                let attention = a.context.read(p, s, Work::Prefill(a.window));
                total += attention * (pairs / (p as f64 * Work::Prefill(a.window).of(s)));
            }
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::new("g", vec![1.0, 2.0, 4.0], vec![1.0, 3.0], vec![1.0, 3.0, 2.0, 6.0, 4.0, 12.0]).unwrap()
    }

    #[test]
    fn bilinear_reads_cells_between_and_beyond() {
        let g = grid();
        assert_eq!(g.bilinear(1.0, 1.0), 1.0);
        assert_eq!(g.bilinear(2.0, 3.0), 6.0);
        assert_eq!(g.bilinear(1.5, 2.0), 3.0); // midway on both axes: (2 + 4) / 2
        assert_eq!(g.bilinear(8.0, 3.0), 24.0); // twice the last batch: twice its time
        assert_eq!(g.read(1, 0.5, Work::Decode(0)), 1.0); // below the first length: read there
        assert_eq!(g.read(1, 7.0, Work::Decode(0)), 3.0 * 8.0 / 4.0); // keys read: (7 + 1) / (3 + 1)
        assert_eq!(g.read(1, 7.0, Work::Decode(2)), 3.0); // a window of 2 keys: no more beyond it
    }

    #[test]
    fn windowed_pairs_add_up_to_the_prompts() {
        // 10 tokens under a window of 4: 1 + 2 + 3 + 4 * 7 = 34 pairs, in any chunking.
        assert_eq!(prefill_pairs(10, 0, 4), 34);
        assert_eq!(prefill_pairs(3, 0, 4) + prefill_pairs(7, 3, 4), 34);
        assert_eq!(Work::Prefill(4).of(10.0), 34.0);
        assert_eq!(prefill_pairs(10, 0, 0), 55); // full attention: 10 * 11 / 2
        assert_eq!(prefill_pairs(4, 6, 0), 4 * 6 + 10);
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(Grid::new("g", vec![1.0], vec![1.0, 2.0], vec![1.0, 2.0]).is_err());
        assert!(Grid::new("g", vec![2.0, 1.0], vec![1.0, 2.0], vec![1.0; 4]).is_err());
        assert!(Grid::new("g", vec![1.0, 2.0], vec![1.0, 2.0], vec![1.0, 2.0, f64::NAN, 1.0]).is_err());
        let full = || vec![Attention { window: 0, context: grid(), generation: grid() }];
        assert!(Measured::new(0.0, vec![0.0, 1.0], vec![0.0], full()).is_err());
        assert!(Measured::new(-1.0, vec![0.0, 1.0], vec![0.0, 1.0], full()).is_err());
        assert!(Measured::new(0.0, vec![0.0, 1.0], vec![0.0, 1.0], vec![]).is_err());
        let m = Measured::new(0.0, vec![0.0, 1.0], vec![0.0, 1.0], full()).unwrap();
        let b = Batch {
            num_seqs: 1,
            prefill_seqs: 0,
            prefill_tokens: 0,
            decode_seqs: 2,
            context_tokens: 5,
            attention_pairs: 7,
        };
        assert!(m.seconds(&b, &[]).is_err()); // 2 tokens, the tables stop at 1
        let b = Batch { decode_seqs: 1, ..b };
        assert!(m.seconds(&Batch { prefill_seqs: 1, prefill_tokens: 0, ..b }, &[(0, 6)]).is_err()); // more cached than context
        assert!(m.seconds(&Batch { prefill_seqs: 1, ..b }, &[]).is_err()); // a prefill without its chunk
        assert_eq!(m.seconds(&b, &[]).unwrap(), 1.0 + 1.0 + 3.0 * 6.0 / 4.0); // 5 cached: past the last length 3
    }
}
