//! The roofline step time on each side of both of its roofs: a step's linear layers and its
//! attention are each bound by compute or by memory, and each of the four corners is checked,
//! with numbers far enough from the ridge that taking the other roof would be off by orders of
//! magnitude (`serve/tests.rs` checks the operation order, with attention memory-bound).

use osbench_core::serve::{Batch, StepTime};

/// (overhead, peak FLOP/s, bytes/s, FLOPs a new token, FLOPs a sequence, FLOPs a pair, dense
/// weight bytes, bytes an expert, experts, the chance a token misses an expert, KV bytes a token,
/// and the all-reduces' fixed and per-token seconds: none, one GPU).
const DENSE: [f64; 13] = [1e-3, 1e15, 1e12, 1e10, 0.0, 1e7, 1e10, 0.0, 0.0, 0.0, 1e5, 0.0, 0.0];

fn batch(new_tokens: u64, context_tokens: u64, attention_pairs: u64) -> Batch {
    Batch { num_seqs: 1, prefill_seqs: 1, prefill_tokens: new_tokens, decode_seqs: 0, context_tokens, attention_pairs }
}

fn seconds(b: &Batch) -> f64 {
    StepTime::new("roofline", &DENSE).unwrap().seconds(b)
}

#[test]
fn a_long_prefill_is_bound_by_compute_in_both_roofs() {
    // Linear: 1e4 tokens x 1e10 FLOPs / 1e15 = 0.1 s, over 1e10 bytes / 1e12 = 0.01 s.
    // Attention: 1e8 pairs x 1e7 FLOPs / 1e15 = 1 s, over 1e5 x 1e4 bytes / 1e12 = 1e-3 s.
    let b = batch(10_000, 0, 100_000_000);
    assert_eq!(seconds(&b), 1e-3 + 1e4 * 1e10 / 1e15 + 1e7 * 1e8 / 1e15);
}

#[test]
fn a_decode_step_over_a_long_context_is_bound_by_memory_in_both_roofs() {
    // Linear: 1 token x 1e10 / 1e15 = 1e-5 s, under 1e10 bytes / 1e12 = 0.01 s.
    // Attention: 1e6 pairs x 1e7 / 1e15 = 1e-2 s, under 1e5 x (1e6 + 1) bytes / 1e12 = 0.1 s.
    let b = batch(1, 1_000_000, 1_000_000);
    assert_eq!(seconds(&b), 1e-3 + 1e10 / 1e12 + 1e5 * 1_000_001.0 / 1e12);
}

#[test]
fn the_roofs_are_chosen_apart() {
    // Linear memory-bound (1e-5 < 1e-2 s), attention compute-bound (1 s > 1e-6 s) ...
    let b = batch(1, 9, 100_000_000);
    assert_eq!(seconds(&b), 1e-3 + 1e10 / 1e12 + 1e7 * 1e8 / 1e15);
    // ... and the other way round (linear 0.1 s > 0.01 s; attention 1e-3 s < 0.1 s).
    let b = batch(10_000, 990_000, 100_000);
    assert_eq!(seconds(&b), 1e-3 + 1e4 * 1e10 / 1e15 + 1e5 * 1e6 / 1e12);
}
