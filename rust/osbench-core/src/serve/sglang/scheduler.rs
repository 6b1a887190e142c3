//! SGLang's scheduler loop (`python/osbench/serve/sglang/scheduler.py`, after
//! `managers/scheduler.py: Scheduler`, its non-overlapped loop `event_loop_normal`):
//! `get_next_batch_to_run` picks each step's batch, and the batch's result
//! (`scheduler_components/batch_result_processor.py`) updates the requests. Implements the
//! engine's [`crate::serve::Scheduler`]; every rule is stated, with its SGLang source, in the
//! Python module this one mirrors function for function.

use super::adder::{AddReqResult, PrefillAdder};
use super::config::Config;
use super::kv::{ceil_pages, KvCache};
use super::policy::{shortest_prefill_chunk_limit, SchedulePolicy};
use super::request::Req;
use crate::error::{internal, invalid, Error, Result};
use crate::hash::splitmix64;
use crate::serve::scheduler::{recomputed, NewRequest, Occupancy, QuietStretch, Scheduler as Semantics, StepPlan};
use crate::serve::step_time::Batch as Work;

/// `environ.py`'s defaults, read by the ratio tracker and by `release_req`.
const SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR: f64 = 0.14;
const SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS: f64 = 600.0;
const SGLANG_RETRACT_DECODE_STEPS: u64 = 20;

/// `scheduler_components/new_token_ratio_tracker.py: NewTokenRatioTracker`.
#[derive(Debug, Clone)]
struct NewTokenRatioTracker {
    init: f64,
    min: f64,
    decay: f64,
    current: f64,
}

impl NewTokenRatioTracker {
    fn new(init: f64) -> Self {
        let min = (init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR).min(1.0);
        NewTokenRatioTracker { init, min, decay: (init - min) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS, current: init }
    }

    fn decay_step(&mut self) {
        self.current = (self.current - self.decay).max(self.min);
    }

    /// `estimate_new_token_ratio_after_retract`: from the progress of those that stay.
    fn estimate_after_retract(reqs: &[Req], stay: &[u32]) -> f64 {
        let decoded: u64 = stay.iter().map(|&i| reqs[i as usize].num_outputs).sum();
        let max_new: u64 = stay.iter().map(|&i| reqs[i as usize].max_new_tokens).sum();
        let n = stay.len() as u64;
        ((decoded + SGLANG_RETRACT_DECODE_STEPS * n) as f64 / (max_new + 1) as f64).min(1.0)
    }
}

/// `managers/schedule_batch.py: ScheduleBatch`: its requests in order; in a mixed batch the
/// last `num_decoding` of them decode inside the prefill.
#[derive(Debug, Clone, Default)]
struct Batch {
    reqs: Vec<u32>,
    batch_is_full: bool,
    chunked_req: Option<u32>,
    num_decoding: usize,
}

/// SGLang 0.5.23's scheduler: the waiting queue, the running batch, the one chunked request,
/// the ratio tracker.
pub struct Scheduler {
    config: Config,
    kv: KvCache,
    policy: SchedulePolicy,
    ratio: NewTokenRatioTracker,
    reqs: Vec<Req>,
    waiting: Vec<u32>,
    running: Batch,
    /// The last batch when it was a prefill (a decode batch is the running batch itself).
    last_extend: Option<Batch>,
    chunked_req: Option<u32>,
    processed_tokens: u64,
    steps: u64,
    plan: StepPlan,
}

impl Scheduler {
    pub fn new(config: &Config, capacity: usize) -> Result<Scheduler> {
        Ok(Scheduler {
            kv: KvCache::new(config.num_pages(), config.page_size)?,
            policy: SchedulePolicy::new(config.policy, &config.random_seed_words),
            ratio: NewTokenRatioTracker::new(config.init_new_token_ratio),
            config: config.clone(),
            reqs: Vec::with_capacity(capacity),
            waiting: Vec::new(),
            running: Batch::default(),
            last_extend: None,
            chunked_req: None,
            processed_tokens: 0,
            steps: 0,
            plan: StepPlan::default(),
        })
    }

    /// `_add_request_to_queue`: to the back of the waiting queue.
    fn enqueue(&mut self, index: u32) {
        self.reqs[index as usize].arrival_processed_tokens = self.processed_tokens;
        self.waiting.push(index);
    }

    fn finished(&self, i: u32) -> bool {
        self.reqs[i as usize].finished()
    }

    /// `get_num_allocatable_reqs`: the requests that may still join, by the running cap and by
    /// the free rows of the request pool (the chunked request holds one).
    fn num_allocatable_reqs(&self, num_held_rows: usize) -> i64 {
        let cap = self.config.running_cap as i64;
        let running_bs = self.running.reqs.len() as i64;
        let held = running_bs + i64::from(self.chunked_req.is_some());
        (cap - running_bs).min((cap - held + num_held_rows as i64).max(0))
    }

    /// `_get_new_batch_prefill_raw`.
    fn get_new_batch_prefill(&mut self) -> Result<Option<Batch>> {
        if self.running.reqs.is_empty() {
            self.running.batch_is_full = false;
        }
        if (self.running.batch_is_full || self.waiting.is_empty()) && self.chunked_req.is_none() {
            return Ok(None);
        }
        if self.num_allocatable_reqs(0) <= 0 && self.chunked_req.is_none() {
            self.running.batch_is_full = true;
            return Ok(None);
        }
        let cfg = &self.config;
        self.policy.calc_priority(&mut self.waiting, &mut self.reqs, &mut self.kv, self.processed_tokens);
        let mixed = if cfg.mixed_chunk { self.running.reqs.len() as u64 } else { 0 };
        let running = self.running.reqs.iter().map(|&i| {
            let r = &self.reqs[i as usize];
            (r.max_new_tokens, r.num_outputs)
        });
        let mut adder = PrefillAdder::new(
            cfg.page_size,
            running,
            self.ratio.current,
            cfg.max_prefill_tokens,
            cfg.chunk_tokens,
            mixed,
            cfg.policy,
            cfg.compensated_sum,
        );
        let continuing = self.chunked_req;
        if let Some(c) = continuing {
            adder.chunked_req_limit = shortest_prefill_chunk_limit(
                cfg.policy,
                &self.reqs[c as usize],
                &self.waiting,
                &self.reqs,
                adder.rem_chunk_tokens.unwrap_or(0),
                cfg.page_size,
            );
            let unfinished = adder.add_chunked_req(&self.kv, &mut self.reqs[c as usize])?;
            self.chunked_req = unfinished.then_some(c);
        }
        for k in 0..self.waiting.len() {
            let i = self.waiting[k];
            if adder.budget_state(&self.kv) == AddReqResult::Other {
                break;
            }
            let held = adder.can_run_list.iter().filter(|&&j| self.reqs[j as usize].alloc_len > 0).count();
            if adder.can_run_list.len() as i64 >= self.num_allocatable_reqs(held) {
                self.running.batch_is_full = true;
            }
            if self.running.batch_is_full {
                break;
            }
            // init_next_round_input: match again, one token short of the whole fill.
            let r = &mut self.reqs[i as usize];
            let limit = Req::max_prefix_len(r.fill_len());
            self.kv.match_req(r, Some(limit));
            let res = adder.add_one_req(&mut self.kv, r, self.chunked_req.is_some())?;
            if res != AddReqResult::Continue {
                if res == AddReqResult::NoToken {
                    self.running.batch_is_full = !adder.can_run_list.is_empty() || !self.running.reqs.is_empty();
                }
                break;
            }
        }
        if adder.can_run_list.is_empty() {
            return Ok(None);
        }
        for &i in &adder.can_run_list {
            if Some(i) != continuing {
                let r = &mut self.reqs[i as usize];
                r.chosen = true;
                self.plan.admitted.push((i, r.prefix_len));
            }
        }
        let reqs = &mut self.reqs;
        self.waiting.retain(|&i| !reqs[i as usize].chosen);
        for &i in &adder.can_run_list {
            self.reqs[i as usize].chosen = false;
        }
        if let Some(c) = adder.new_chunked_req {
            if self.chunked_req.is_some() {
                return Err(internal("a second chunked request"));
            }
            self.chunked_req = Some(c);
        }
        let mut batch = Batch { reqs: adder.can_run_list, chunked_req: self.chunked_req, ..Batch::default() };
        self.prepare_for_extend(&batch)?;
        if self.config.mixed_chunk && !self.running.reqs.is_empty() && self.check_decode_mem_running() {
            // mix_with_running: the running requests decode in this batch, after its prefills.
            let running = std::mem::take(&mut self.running.reqs);
            self.prepare_for_decode(&running)?;
            batch.num_decoding = running.len();
            batch.reqs.extend_from_slice(&running);
        }
        Ok(Some(batch))
    }

    /// `ScheduleBatch.prepare_for_extend` (`mem_cache/allocation.py: alloc_for_extend`): evict
    /// for the batch's new tokens (a page more per request when pages hold several tokens),
    /// then give each request slots up to the end of its extend.
    fn prepare_for_extend(&mut self, batch: &Batch) -> Result<()> {
        let page = self.kv.page_size;
        let mut demand: u64 =
            batch.reqs.iter().map(|&i| self.reqs[i as usize].extend_end - self.reqs[i as usize].prefix_len).sum();
        if page > 1 {
            demand += batch.reqs.len() as u64 * page;
        }
        self.kv.evict_to_free_tokens(demand);
        let pages: u64 = batch
            .reqs
            .iter()
            .map(|&i| {
                let r = &self.reqs[i as usize];
                ceil_pages(r.extend_end, page) - ceil_pages(r.alloc_len.max(r.prefix_len), page)
            })
            .sum();
        if pages > self.kv.free_pages {
            let names: Vec<String> = batch.reqs.iter().map(|i| i.to_string()).collect();
            return Err(invalid(
                "max_total_tokens",
                self.config.max_total_tokens,
                format!(
                    "for these requests SGLang 0.5.23 runs out of KV in a prefill of requests {} ({} tokens wanted, {} \
                     free after eviction), where it raises 'Out of memory. Try to lower your batch size.' \
                     (mem_cache/allocation.py: alloc_token_slots). A continuing chunk takes a whole chunk when the \
                     admission budget has none left (prefill_budget.py: PrefillBudget.available_chunk_tokens); give \
                     the pool more tokens",
                    names.join(", "),
                    pages * page,
                    self.kv.free_pages * page
                ),
            ));
        }
        for &i in &batch.reqs {
            let r = &mut self.reqs[i as usize];
            if r.alloc_len < r.prefix_len {
                // a new request: its prefix is the tree's
                r.alloc_len = r.prefix_len;
                r.protected = r.prefix_len;
            }
            let end = r.extend_end;
            self.kv.allocate(r, end)?;
            r.committed = end;
        }
        Ok(())
    }

    /// `ScheduleBatch.check_decode_mem` over `reqs`: evict until the next decode's new pages fit.
    fn check_decode_mem(&mut self, reqs: &[u32]) -> bool {
        let page = self.kv.page_size;
        let need = reqs.iter().filter(|&&i| self.reqs[i as usize].committed % page == 0).count() as u64 * page;
        self.kv.evict_to_free_tokens(need);
        self.kv.available_size() >= need
    }

    fn check_decode_mem_running(&mut self) -> bool {
        let running = std::mem::take(&mut self.running.reqs);
        let fits = self.check_decode_mem(&running);
        self.running.reqs = running;
        fits
    }

    /// `ScheduleBatch.prepare_for_decode` (`alloc_for_decode`): a slot for each request's last
    /// token, evicting first (a page per request when pages hold several tokens).
    fn prepare_for_decode(&mut self, reqs: &[u32]) -> Result<()> {
        let page = self.kv.page_size;
        self.kv.evict_to_free_tokens(reqs.len() as u64 * page);
        for &i in reqs {
            let r = &mut self.reqs[i as usize];
            let end = r.committed + 1;
            self.kv.allocate(r, end)?;
            r.committed = end;
        }
        Ok(())
    }

    /// `update_running_batch`: decode the running batch, retracting requests first when the
    /// next token of every one does not fit (`ScheduleBatch.retract_decode`).
    fn update_running_batch(&mut self) -> Result<()> {
        let initial = self.running.reqs.len();
        if !self.check_decode_mem_running() {
            let ratio = self.retract_decode()?;
            self.ratio.current = ratio;
            for k in 0..self.plan.preempted.len() {
                let i = self.plan.preempted[k];
                self.enqueue(i); // _add_request_to_queue(is_retracted=True)
            }
        } else {
            self.ratio.decay_step();
        }
        if self.running.reqs.len() < initial {
            self.running.batch_is_full = false;
        }
        let running = std::mem::take(&mut self.running.reqs);
        let done = self.prepare_for_decode(&running);
        self.running.reqs = running;
        done
    }

    /// `ScheduleBatch.retract_decode`: keep the requests with the most output (ties: the
    /// shortest prompt, then batch order), retracting from the other end, at least one and never
    /// the last, until the rest decode; after each, the tree is evicted down for the remaining
    /// requests' next 20 tokens. The batch keeps the sorted order; returns the new ratio.
    fn retract_decode(&mut self) -> Result<f64> {
        let mut order = std::mem::take(&mut self.running.reqs);
        let reqs = &self.reqs;
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&reqs[a as usize], &reqs[b as usize]);
            (rb.num_outputs, ra.prompt_len).cmp(&(ra.num_outputs, rb.prompt_len))
        });
        let mut first = true;
        while first || !self.check_decode_mem(&order) {
            if order.len() == 1 {
                break;
            }
            first = false;
            let Some(i) = order.pop() else { break };
            let r = &mut self.reqs[i as usize];
            self.kv.release(r, false)?;
            r.prefix_len = 0;
            r.extend_end = 0;
            r.num_matched = 0;
            r.last_node = None;
            self.kv.evict_to_free_tokens(order.len() as u64 * SGLANG_RETRACT_DECODE_STEPS);
            self.plan.preempted.push(i);
        }
        if order.len() <= 1 && !self.check_decode_mem(&order) {
            return Err(internal("a request cannot decode even alone in the pool"));
        }
        let ratio = NewTokenRatioTracker::estimate_after_retract(&self.reqs, &order);
        self.running.reqs = order;
        Ok(ratio)
    }

    /// The step's scheduled requests, their tokens and the Batch (`stepper.py: Stepper.schedule`,
    /// `steptime.py: StepWork.of`): a decoding request computes one token over its committed
    /// ones, a prefilling one its extend over its prefix.
    fn plan_batch(&mut self, batch: &Batch, decode_all: bool) -> Result<()> {
        let mut b = Work { num_seqs: batch.reqs.len() as u64, ..Work::default() };
        let first_decoding = if decode_all { 0 } else { batch.reqs.len() - batch.num_decoding };
        for (k, &i) in batch.reqs.iter().enumerate() {
            let r = &mut self.reqs[i as usize];
            let (new, cached) =
                if k >= first_decoding { (1, r.committed - 1) } else { (r.extend_end - r.prefix_len, r.prefix_len) };
            self.plan.recomputed_tokens += recomputed(cached, new, &mut r.computed_high);
            self.plan.scheduled.push((i, new));
            if r.fill_len() - cached > 1 {
                b.prefill_seqs += 1;
                b.prefill_tokens += new;
                self.plan.prefill_chunks.push((new, cached));
            } else {
                b.decode_seqs += 1;
            }
            b.context_tokens += cached;
            b.attention_pairs = new
                .checked_mul(cached)
                .and_then(|p| p.checked_add(new * (new + 1) / 2))
                .and_then(|p| p.checked_add(b.attention_pairs))
                .filter(|&p| p <= i64::MAX as u64)
                .ok_or_else(|| invalid("requests", "prompts this long", "a step's attention pairs within int64"))?;
        }
        self.plan.batch = b;
        Ok(())
    }
}

impl Semantics for Scheduler {
    fn add_request(&mut self, request: NewRequest<'_>) {
        // The prompt's tokens: its block keys at one token a block, shifted into 62 bits, as
        // `stepper.prompt_tokens` makes them; without keys (prompts without content), the keys
        // `Requests.prompt_block_keys(1)` gives such prompts: token `k` of request `i` is
        // `mix64(2**63 ^ i << 32 ^ k)`, of that request and position alone.
        let prompt: Vec<i64> = match request.keys {
            Some(keys) => keys.iter().map(|&k| (k >> 2) as i64).collect(),
            None => {
                let tag = (1u64 << 63) ^ (u64::from(request.index) << 32);
                (0..request.prompt_len).map(|k| (splitmix64(tag ^ k) >> 2) as i64).collect()
            }
        };
        self.reqs.push(Req::new(request.index, request.arrival, prompt, request.output_len));
        self.enqueue(request.index);
    }

    fn has_unfinished_requests(&self) -> bool {
        !self.waiting.is_empty()
            || self.running.reqs.iter().any(|&i| !self.finished(i))
            || self.chunked_req.is_some()
            || self.last_extend.as_ref().is_some_and(|b| b.reqs.iter().any(|&i| !self.finished(i)))
    }

    /// `Scheduler.on_idle`: with nothing running or waiting the ratio starts over.
    fn on_idle(&mut self) {
        self.ratio.current = self.ratio.init;
    }

    /// `get_next_batch_to_run`: merge the last prefill batch into the running batch, then run a
    /// new prefill batch if one can be formed ("prefill first"), else decode the running batch.
    fn schedule(&mut self) -> Result<&StepPlan> {
        self.plan.clear();
        let excluded = self.chunked_req;
        if let Some(c) = excluded {
            // The chunk it just computed goes into the tree (stash_chunked_request).
            let r = &mut self.reqs[c as usize];
            if r.extend_end > r.prefix_len {
                let end = r.extend_end;
                self.kv.checkpoint(r, end)?;
                r.prefix_len = end;
            }
        }
        if let Some(mut last) = self.last_extend.take() {
            let before = last.reqs.len();
            let reqs = &self.reqs;
            let chunked = last.chunked_req;
            last.reqs.retain(|&i| !reqs[i as usize].finished() && Some(i) != excluded && Some(i) != chunked);
            if last.reqs.len() < before {
                self.running.batch_is_full = false;
            }
            if !last.reqs.is_empty() {
                if self.running.reqs.is_empty() {
                    self.running = Batch { reqs: last.reqs, ..Batch::default() };
                } else {
                    self.running.reqs.extend_from_slice(&last.reqs);
                }
            }
        }
        let before = self.running.reqs.len();
        let reqs = &self.reqs;
        self.running.reqs.retain(|&i| !reqs[i as usize].finished());
        if self.running.reqs.len() < before {
            self.running.batch_is_full = false;
        }

        match self.get_new_batch_prefill()? {
            Some(batch) => {
                // run_batch: the prefill-token counter grows by the batch's extend tokens (a
                // mixed batch's decoding requests count one each).
                let prefills = batch.reqs.len() - batch.num_decoding;
                let extend: u64 = batch.reqs[..prefills]
                    .iter()
                    .map(|&i| self.reqs[i as usize].extend_end - self.reqs[i as usize].prefix_len)
                    .sum();
                self.processed_tokens += extend + batch.num_decoding as u64;
                self.plan_batch(&batch, false)?;
                self.last_extend = Some(batch);
            }
            None if !self.running.reqs.is_empty() => {
                self.update_running_batch()?;
                let running = std::mem::take(&mut self.running);
                let planned = self.plan_batch(&running, true);
                self.running = running;
                planned?;
            }
            None => return Err(internal("the scheduler formed no batch with requests waiting")),
        }
        self.steps += 1;
        Ok(&self.plan)
    }

    /// `process_batch_result_prefill` / `_decode`: every request of the batch but the one still
    /// being chunked gets a token; a finished request gives its tokens to the tree and frees the
    /// rest; a prefilled one that goes on decoding checkpoints its prompt into the tree.
    fn update_from_output(&mut self) -> Result<&StepPlan> {
        let (reqs, first_decoding) = match self.last_extend.as_mut() {
            Some(b) => {
                let reqs = std::mem::take(&mut b.reqs);
                let prefills = reqs.len() - b.num_decoding;
                (reqs, prefills)
            }
            None => (std::mem::take(&mut self.running.reqs), 0),
        };
        for (k, &i) in reqs.iter().enumerate() {
            if Some(i) == self.chunked_req {
                continue; // a middle chunk: no token
            }
            let r = &mut self.reqs[i as usize];
            r.append_output();
            self.plan.produced.push(i);
            if r.finished() {
                self.kv.release(r, true)?;
                self.plan.finished.push(i);
            } else if k < first_decoding {
                let end = r.extend_end;
                self.kv.checkpoint(r, end)?;
                r.prefix_len = end;
            }
        }
        match self.last_extend.as_mut() {
            Some(b) => b.reqs = reqs,
            None => self.running.reqs = reqs,
        }
        Ok(&self.plan)
    }

    fn plan(&self) -> &StepPlan {
        &self.plan
    }

    fn num_output_tokens(&self, index: u32) -> u64 {
        self.reqs[index as usize].num_outputs
    }

    fn num_waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The pages free to an allocation now (the pool's free ones and the tree's evictable
    /// ones), the rest used, and the pages the tree holds (`stepper.py: Stepper`).
    fn occupancy(&self) -> Occupancy {
        let free = self.kv.reusable_pages();
        Occupancy { used: self.kv.num_pages - free, free, cached: self.kv.cached_pages() }
    }

    fn running(&self) -> &[u32] {
        &self.running.reqs
    }

    /// Every step without a token computes a middle chunk of a prompt, so the count of steps
    /// never repeats: the guard never finds a cycle, as none can happen.
    fn write_state(&self, out: &mut Vec<u64>) -> Result<()> {
        out.push(self.steps);
        out.push(self.processed_tokens);
        Ok(())
    }

    fn livelock_error(&self, stalled: &str) -> Error {
        internal(format!("SGLang's scheduler repeated its state: {stalled}"))
    }

    /// No decode jump: every decode step allocates a slot per request (the pool's counts move
    /// every step) and decays the ratio.
    fn quiet_stretch(&self) -> QuietStretch {
        QuietStretch::default()
    }

    fn skip_quiet(&mut self, steps: u64) -> Result<()> {
        if steps == 0 {
            Ok(())
        } else {
            Err(internal("SGLang's scheduler has no quiet stretch to skip"))
        }
    }
}
