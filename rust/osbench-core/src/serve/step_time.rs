//! How long one engine step takes: `python/osbench/serve/steptime.py`'s models, performing
//! the same floating-point operations in the same order, so the times are bit-equal.

pub use super::step_time_batch::{Batch, Chunk};
use super::step_time_measured::Measured;
use crate::error::{invalid, Result};
use std::sync::Arc;

/// A step-time model, from `StepTime.spec()` (the measured one with its tables,
/// `StepTime.measured`).
#[derive(Debug, Clone, PartialEq)]
pub enum StepTime {
    /// `(a, b_prefill_token, c_decode_seq, d_context_token)`.
    Linear([f64; 4]),
    /// `(overhead, peak_flops, bandwidth, flops_per_token, flops_per_seq, flops_per_pair,
    /// dense_bytes, expert_bytes, experts, expert_miss, kv_bytes_per_token, allreduce_fixed,
    /// allreduce_per_token)`.
    Roofline([f64; 13]),
    /// The ideal roofline's 13 coefficients, then `(per_step, per_request, weight_factor,
    /// kv_factor, compute_factor, allreduce_factor)`.
    Corrected([f64; 19]),
    /// The measured kernel tables (`measured.py: MeasuredTables`), shared, loaded once.
    Measured(Arc<Measured>),
}

/// The kinds, as `StepTime.kind` names them, with their number of coefficients.
pub const KINDS: [(&str, usize); 3] = [("linear", 4), ("roofline", 13), ("corrected", 19)];

/// Python's `max(a, b)`: `b` only if it is strictly larger.
#[inline]
fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// `x ** n` by squaring (`steptime.py: _power`).
#[inline]
fn power(mut x: f64, mut n: u64) -> f64 {
    let mut result = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            result *= x;
        }
        x *= x;
        n >>= 1;
    }
    result
}

impl StepTime {
    /// The model `kind` with these coefficients.
    pub fn new(kind: &str, coefficients: &[f64]) -> Result<Self> {
        let accepted = || format!("one of {}", KINDS.map(|(k, _)| format!("{k:?}")).join(", "));
        let &(_, count) =
            KINDS.iter().find(|(k, _)| *k == kind).ok_or_else(|| invalid("kind", format!("{kind:?}"), accepted()))?;
        if coefficients.len() != count {
            return Err(invalid(
                "coefficients",
                format!("{} numbers", coefficients.len()),
                format!("{count} numbers for a {kind} model"),
            ));
        }
        Ok(match kind {
            "linear" => StepTime::Linear(coefficients.try_into().expect("length checked")),
            "roofline" => StepTime::Roofline(coefficients.try_into().expect("length checked")),
            _ => StepTime::Corrected(coefficients.try_into().expect("length checked")),
        })
    }

    /// The step's duration in seconds, unchecked (`StepTime.__call__`); a measured model
    /// prices a step without prefill chunks here (NaN for one it refuses: see
    /// [`StepTime::duration_with`]).
    pub fn seconds(&self, b: &Batch) -> f64 {
        match self {
            StepTime::Measured(m) => m.seconds(b, &[]).unwrap_or(f64::NAN),
            StepTime::Linear([a, per_prefill_token, per_decode_seq, per_context_token]) => {
                a + per_prefill_token * b.prefill_tokens as f64
                    + per_decode_seq * b.decode_seqs as f64
                    + per_context_token * b.context_tokens as f64
            }
            StepTime::Roofline(
                [overhead, peak_flops, bandwidth, flops_per_token, flops_per_seq, flops_per_pair, dense_bytes, expert_bytes, experts, expert_miss, kv_bytes_per_token, allreduce_fixed, allreduce_per_token],
            ) => {
                let new = b.prefill_tokens + b.decode_seqs;
                let linear_flops = flops_per_token * new as f64 + flops_per_seq * b.num_seqs as f64;
                let touched = experts * (1.0 - power(*expert_miss, new));
                let weight_bytes = dense_bytes + expert_bytes * touched;
                let linear = py_max(linear_flops / peak_flops, weight_bytes / bandwidth);
                let attention_flops = flops_per_pair * b.attention_pairs as f64;
                let kv_bytes = kv_bytes_per_token * (b.context_tokens + new) as f64;
                let attention = py_max(attention_flops / peak_flops, kv_bytes / bandwidth);
                let allreduce = allreduce_fixed + allreduce_per_token * new as f64;
                overhead + linear + attention + allreduce
            }
            StepTime::Corrected(c) => {
                let [_, peak_flops, bandwidth, flops_per_token, flops_per_seq, flops_per_pair, dense_bytes, expert_bytes, experts, expert_miss, kv_bytes_per_token, allreduce_fixed, allreduce_per_token, per_step, per_request, weight_factor, kv_factor, compute_factor, allreduce_factor] =
                    *c;
                let new = b.prefill_tokens + b.decode_seqs;
                let touched = experts * (1.0 - power(expert_miss, new));
                let weights = (dense_bytes + expert_bytes * touched) / bandwidth;
                let kv = kv_bytes_per_token * (b.context_tokens + new) as f64 / bandwidth;
                let flops = (flops_per_token * new as f64
                    + flops_per_seq * b.num_seqs as f64
                    + flops_per_pair * b.attention_pairs as f64)
                    / peak_flops;
                let allreduce = allreduce_fixed + allreduce_per_token * new as f64;
                per_step
                    + per_request * b.num_seqs as f64
                    + weight_factor * weights
                    + kv_factor * kv
                    + compute_factor * flops
                    + allreduce_factor * allreduce
            }
        }
    }

    /// The step's duration, checked as `run.py: step_duration` checks it: finite, >= 0. A
    /// step with prefill requests needs their chunks: [`StepTime::duration_with`].
    pub fn duration(&self, b: &Batch) -> Result<f64> {
        self.duration_with(b, &[])
    }

    /// The step's duration given its prefill requests' chunks, in scheduling order (only the
    /// measured model reads them: it prices each chunk's attention over its own context).
    pub fn duration_with(&self, b: &Batch, prefill_chunks: &[Chunk]) -> Result<f64> {
        let seconds = match self {
            StepTime::Measured(m) => m.seconds(b, prefill_chunks)?,
            _ => self.seconds(b),
        };
        if seconds >= 0.0 && seconds.is_finite() {
            Ok(seconds)
        } else {
            let model = match self {
                StepTime::Measured(_) => "the measured tables".to_string(),
                _ => format!("{self:?}"),
            };
            Err(invalid(
                "step_time",
                model,
                format!("a model giving a finite number of seconds >= 0; it gives {seconds} for {b:?}"),
            ))
        }
    }
}
