//! What a step computes, as the step-time models read it (`python/osbench/serve/steptime.py:
//! Batch, StepWork`): its own module so that each model's file depends on it alone.

/// What one engine step computes (`steptime.py: Batch`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Batch {
    pub num_seqs: u64,
    pub prefill_seqs: u64,
    pub prefill_tokens: u64,
    pub decode_seqs: u64,
    pub context_tokens: u64,
    pub attention_pairs: u64,
}

/// One prefill request of a step: `(new tokens, tokens in its KV cache before the step)`
/// (`steptime.py: StepWork.prefill_chunks`).
pub type Chunk = (u64, u64);
