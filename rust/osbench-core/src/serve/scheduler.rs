//! The seam between the engine loop and an engine's semantics: the [`Scheduler`] trait, and
//! the [`StepPlan`] every scheduler reports a step with.
//!
//! The loop (`engine.rs`: the clock, arrivals, step times, the recorder, the decode jump, the
//! livelock guard) knows nothing of blocks, queues or policies; a semantics (`vllm/`, one
//! folder per engine it follows) knows nothing of time. `python/osbench/serve/drive.py` is
//! the same seam on the Python side.

use super::step_time::Batch;
use crate::error::{Error, Result};

/// A request as it reaches an engine.
#[derive(Debug, Clone, Copy)]
pub struct NewRequest<'a> {
    /// The engine's own numbering: requests are added as 0, 1, 2...
    pub index: u32,
    /// When it reached the engine (seconds on the engine's clock).
    pub arrival: f64,
    /// Smaller is more urgent.
    pub priority: i64,
    pub prompt_len: u64,
    pub output_len: u64,
    /// Its predicted output length (the policies that order by it).
    pub predicted: u64,
    /// The content keys of its prompt's full blocks, with prefix caching (else None).
    pub keys: Option<&'a [u64]>,
    /// Prompt tokens whose KV another instance computed and sent (a disaggregated prefill), taken
    /// as computed at its first admission; 0 for a request served from its prompt.
    pub external: u64,
}

/// What one step decided and did (`SchedulerOutput`, and what `update_from_output` made of
/// it), reused from step to step.
#[derive(Debug, Clone, Default)]
pub struct StepPlan {
    /// Requests scheduled, in scheduling order, with their new tokens.
    pub scheduled: Vec<(u32, u64)>,
    pub preempted: Vec<u32>,
    /// Requests admitted from the waiting queue, with their prefix-hit tokens.
    pub admitted: Vec<(u32, u64)>,
    pub batch: Batch,
    /// Per prefill request of the batch, in scheduling order: (new tokens, tokens already in
    /// its KV cache before this chunk), for step times that price each chunk.
    pub prefill_chunks: Vec<(u64, u64)>,
    /// KV bytes the step copies to host memory (preemption by swap) and back (their
    /// readmission), and the seconds those copies add to the step.
    pub swap_out_bytes: u64,
    pub swap_in_bytes: u64,
    pub swap_time: f64,
    /// Tokens the step computes whose KV the request had held before (lost to a preemption by
    /// recompute or a retraction, less what the prefix cache gave back; [`recomputed`]).
    pub recomputed_tokens: u64,
    /// Requests admitted with KV loaded from the tiers, with those tokens (`tiers.py`); the
    /// bytes the step loads from the tiers and the seconds the loads add to it.
    pub loaded: Vec<(u32, u64)>,
    pub tier_load_bytes: u64,
    pub tier_time: f64,
    /// Requests that got an output token, and those that finished, in order.
    pub produced: Vec<u32>,
    pub finished: Vec<u32>,
}

/// Of a request's `new` tokens computed over its `cached` ones, those computed again: below
/// `high`, the most tokens its KV has ever held (after a preemption or a retraction;
/// `drive.py: recomputed`). `high` moves up to the tokens computed.
pub fn recomputed(cached: u64, new: u64, high: &mut u64) -> u64 {
    let done = cached + new;
    let again = done.min(*high).saturating_sub(cached);
    *high = (*high).max(done);
    again
}

impl StepPlan {
    pub fn clear(&mut self) {
        self.scheduled.clear();
        self.preempted.clear();
        self.admitted.clear();
        self.prefill_chunks.clear();
        self.produced.clear();
        self.finished.clear();
        self.batch = Batch::default();
        self.swap_out_bytes = 0;
        self.swap_in_bytes = 0;
        self.swap_time = 0.0;
        self.recomputed_tokens = 0;
        self.loaded.clear();
        self.tier_load_bytes = 0;
        self.tier_time = 0.0;
    }
}

/// The KV pool after a step, in blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// Held by requests.
    pub used: u64,
    /// Free (cached content no request holds included).
    pub free: u64,
    /// Distinct contents in the prefix cache.
    pub cached: u64,
}

/// After a quiet step (every running request decoded its one next token and nothing else
/// changed), how far the same step repeats with nothing but token counts changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuietStretch {
    /// Steps that can be taken at once (0: none).
    pub steps: u64,
    /// Tokens in the KV cache of the running requests before the first of them.
    pub context_tokens: u64,
}

/// An engine's scheduling semantics, one step at a time.
pub trait Scheduler {
    /// A new arrival joins the waiting queue (`add_request`).
    fn add_request(&mut self, request: NewRequest<'_>);

    /// Whether any request is running or waiting.
    fn has_unfinished_requests(&self) -> bool;

    /// The loop found nothing running or waiting and waits for the next request (the
    /// reference's `Stepper.has_unfinished_requests` answering False): SGLang resets its
    /// ratio there (`Scheduler.on_idle`). Nothing by default.
    fn on_idle(&mut self) {}

    /// Decide the next step (`schedule`): its requests and their tokens, its batch.
    fn schedule(&mut self) -> Result<&StepPlan>;

    /// The model ran the planned step (`update_from_output`): fills the plan's `produced`
    /// and `finished`.
    fn update_from_output(&mut self) -> Result<&StepPlan>;

    /// The last plan.
    fn plan(&self) -> &StepPlan;

    /// Output tokens request `index` has produced so far.
    fn num_output_tokens(&self, index: u32) -> u64;

    /// Requests waiting after the last `schedule`.
    fn num_waiting(&self) -> usize;

    /// The pool now.
    fn occupancy(&self) -> Occupancy;

    /// Running requests, in order.
    fn running(&self) -> &[u32];

    /// The whole state that decides the steps to come with the requests added so far, as
    /// numbers, for the livelock guard (the clock is not part of it).
    fn write_state(&self, out: &mut Vec<u64>) -> Result<()>;

    /// The error of a run the livelock guard found repeating forever; `stalled`: since when,
    /// and until when (`livelock::stalled`).
    fn livelock_error(&self, stalled: &str) -> Error;

    /// What each KV tier did so far (none without tiers).
    fn tier_counts(&self) -> &[TierCounts] {
        &[]
    }

    /// After the last step: the quiet stretch that follows it (none when the step was not
    /// quiet).
    fn quiet_stretch(&self) -> QuietStretch;

    /// Take `steps` steps of the quiet stretch at once: each running request decodes `steps`
    /// more tokens (no more than [`Scheduler::quiet_stretch`] said).
    fn skip_quiet(&mut self, steps: u64) -> Result<()>;
}

/// What a KV tier did over a run, in blocks (a semantics with tiers reports one per tier).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TierCounts {
    /// Blocks admissions loaded from it.
    pub hits: u64,
    /// Evicted contents stored in it.
    pub stored: u64,
    /// Of those, the ones it did not hold (new content, which may evict other).
    pub inserted: u64,
}
