//! The scheduler (`vllm/v1/core/sched/scheduler.py: Scheduler`): the waiting queue, the
//! running list, and `schedule()` / `update_from_output()`, one pair per engine step. Every
//! loop and tie-break is that of `python/osbench/serve/reference.py: Scheduler`.

use super::config::Config;
use super::kv_cache_manager::KvCacheManager;
use super::queue::WaitingQueue;
use super::request::{Request, Status};
use super::tiers::Tiers;
use crate::error::{invalid, try_grow, Error, Result};
use crate::serve::scheduler::TierCounts;
use crate::serve::scheduler::{self as seam, NewRequest, Occupancy, QuietStretch, StepPlan};
use crate::serve::step_time::Batch;

#[derive(Debug)]
pub struct Scheduler<'c> {
    config: &'c Config,
    pub kv: KvCacheManager,
    pub waiting: WaitingQueue,
    /// Running requests, in admission order.
    pub running: Vec<u32>,
    /// Every request that has arrived, by index.
    pub requests: Vec<Request>,
    pub plan: StepPlan,
    hits: Vec<u32>,
    /// The pool's (allocations, registrations) before the last step: unchanged after it, the
    /// step left the pool as it was.
    pool_before: (u64, u64),
    /// Steps scheduled so far, the jumped ones included (`mlfq`'s boost counts them).
    steps: u64,
    /// Free blocks of the host pool (preemption by swap).
    host_free: u64,
    /// The KV tiers (made at the first step: making a cache can fail), and the tier each
    /// block an admission found there is in.
    tiers: Option<Tiers>,
    tier_hits: Vec<u8>,
}

impl<'c> Scheduler<'c> {
    pub fn new(config: &'c Config, num_requests: usize) -> Self {
        Scheduler {
            config,
            kv: KvCacheManager::new(
                num_requests,
                config.num_blocks,
                config.block_size,
                config.enable_prefix_caching,
                config.watermark_blocks,
            ),
            waiting: config.policy.queue(),
            running: Vec::new(),
            requests: Vec::with_capacity(num_requests),
            plan: StepPlan::default(),
            hits: Vec::new(),
            pool_before: (0, 0),
            steps: 0,
            host_free: config.swap.map_or(0, |s| s.host_blocks),
            tiers: None,
            tier_hits: Vec::new(),
        }
    }

    /// A new arrival joins the waiting queue (`add_request`). Requests arrive in index order.
    fn add(&mut self, request: Request) {
        debug_assert_eq!(request.index as usize, self.requests.len());
        self.kv.add_request();
        self.waiting.add_request(request.index, self.config.policy.rank(&request));
        self.requests.push(request);
    }

    /// Decide the step into `self.plan` (`schedule`).
    fn decide(&mut self) -> Result<()> {
        let cfg = self.config;
        if let (None, Some(tiers)) = (&self.tiers, &cfg.tiers) {
            self.tiers = Some(Tiers::new(tiers)?);
            self.kv.pool.evicted = Some(Vec::new());
        }
        if cfg.policy.boost_due(self.steps) {
            self.boost();
        }
        self.steps += 1;
        self.plan.clear();
        self.pool_before = (self.kv.pool.allocations, self.kv.pool.registrations);
        let mut token_budget = cfg.max_num_batched_tokens;
        // The long-prefill cap only applies when another request could use the budget.
        let num_eligible = self.running.len() + self.waiting.len();
        let threshold = if num_eligible > 1 { cfg.long_prefill_token_threshold } else { 0 };

        // First the running requests, in order.
        let mut req_index = 0;
        while req_index < self.running.len() && token_budget > 0 {
            let index = self.running[req_index];
            let request = &self.requests[index as usize];
            let mut num_new_tokens = request.num_tokens() - request.num_computed_tokens;
            if 0 < threshold && threshold < num_new_tokens {
                num_new_tokens = threshold;
            }
            num_new_tokens = num_new_tokens.min(token_budget);
            let mut allocated = false;
            loop {
                if self.kv.allocate_slots(&self.requests[index as usize], num_new_tokens, &[], false, true)? {
                    allocated = true;
                    break;
                }
                // No blocks: preempt the policy's victim and retry.
                let victim_index = cfg.policy.victim(&self.running, &self.requests);
                let victim = self.running.remove(victim_index);
                if victim_index < req_index {
                    // Already scheduled this step: its tokens come back.
                    req_index -= 1;
                    if let Some(pos) = self.plan.scheduled.iter().position(|&(i, _)| i == victim) {
                        token_budget += self.plan.scheduled.remove(pos).1;
                    }
                }
                self.preempt_request(victim);
                self.plan.preempted.push(victim);
                if victim == index {
                    break; // nothing left to preempt: it cannot run this step
                }
            }
            if !allocated {
                // It preempted itself; under a keyed policy the more urgent requests after it
                // may still fit (under `fcfs` it was the last running one: the loop ends).
                continue;
            }
            self.plan.scheduled.push((index, num_new_tokens));
            token_budget -= num_new_tokens;
            req_index += 1;
        }

        // Then the waiting requests, unless the pool was short this step; the first one that
        // does not fit stops admission.
        if self.plan.preempted.is_empty() {
            while token_budget > 0 && self.running.len() < cfg.max_num_seqs {
                let Some(index) = self.waiting.peek_request() else { break };
                let request = &self.requests[index as usize];
                // A swapped request brings its KV back from the host pool, the whole block
                // table, without a prefix lookup (`swap.py`).
                let swapped = request.swapped_blocks;
                let num_hit_tokens = if swapped > 0 {
                    self.hits.clear();
                    0
                } else {
                    self.kv.get_computed_blocks(request, &mut self.hits)
                };
                // The lookup goes on in the KV tiers (`tiers.py`): what they hold is loaded
                // into fresh blocks, computed, outside the token budget.
                self.tier_hits.clear();
                if swapped == 0 {
                    if let Some(tiers) = &self.tiers {
                        find_in_tiers(tiers, request, self.hits.len(), cfg.block_size, &mut self.tier_hits);
                    }
                }
                let num_tier_tokens = self.tier_hits.len() as u64 * cfg.block_size;
                // KV sent by a prefill instance (the connector's get_num_new_matched_tokens):
                // computed beyond the local hit, in fresh blocks, outside the token budget.
                let num_local = num_hit_tokens + num_tier_tokens;
                let num_external = if swapped > 0 { 0 } else { request.external.saturating_sub(num_local) };
                let num_computed = if swapped > 0 { request.num_computed_tokens } else { num_local + num_external };
                let mut num_new_tokens = request.num_tokens() - num_computed;
                if 0 < threshold && threshold < num_new_tokens {
                    num_new_tokens = threshold;
                }
                if !cfg.enable_chunked_prefill && num_new_tokens > token_budget {
                    break; // without chunked prefill the whole rest must fit in this step
                }
                num_new_tokens = num_new_tokens.min(token_budget);
                let has_scheduled_reqs = !self.running.is_empty();
                if !self.kv.allocate_slots(
                    request,
                    num_new_tokens + num_tier_tokens + num_external,
                    &self.hits,
                    cfg.scheduler_reserve_full_isl,
                    has_scheduled_reqs,
                )? {
                    break;
                }
                self.waiting.pop_request();
                self.running.push(index);
                let request = &mut self.requests[index as usize];
                request.status = Status::Running;
                request.num_computed_tokens = num_computed;
                request.external = 0; // a preempted request recomputes its prompt here
                if swapped > 0 {
                    request.swapped_blocks = 0;
                    self.host_free += swapped;
                    self.plan.swap_in_bytes += swapped * self.swap_block_bytes();
                }
                if let Some(tiers) = &mut self.tiers {
                    // Each block found is loaded: a hit of its tier's cache.
                    let first = self.hits.len();
                    for (j, &tier) in self.tier_hits.iter().enumerate() {
                        let k = first + j;
                        tiers.load(tier, self.requests[index as usize].block_hashes[k], k as u64)?;
                    }
                    if num_tier_tokens > 0 {
                        self.plan.loaded.push((index, num_tier_tokens));
                    }
                }
                self.plan.scheduled.push((index, num_new_tokens));
                self.plan.admitted.push((index, num_hit_tokens));
                token_budget -= num_new_tokens;
            }
        }

        // The contents the GPU evicted this step go to the tiers once it is decided; then the
        // step's loads are priced.
        if let Some(tiers) = &mut self.tiers {
            if let Some(evicted) = &mut self.kv.pool.evicted {
                for (hash, position) in evicted.drain(..) {
                    tiers.store(hash, position)?;
                }
            }
            (self.plan.tier_load_bytes, self.plan.tier_time) = tiers.take_step_loads();
        }

        // _update_after_schedule: the scheduled tokens count as computed from now on; the
        // step's Batch (`run.py: batch_of`).
        let mut b = Batch { num_seqs: self.plan.scheduled.len() as u64, ..Batch::default() };
        for &(index, new) in &self.plan.scheduled {
            let request = &mut self.requests[index as usize];
            let cached = request.num_computed_tokens;
            if request.num_tokens() - cached > 1 {
                b.prefill_seqs += 1;
                b.prefill_tokens += new;
                self.plan.prefill_chunks.push((new, cached));
            } else {
                b.decode_seqs += 1;
            }
            b.context_tokens += cached;
            self.plan.recomputed_tokens += seam::recomputed(cached, new, &mut request.computed_high);
            b.attention_pairs = new
                .checked_mul(cached)
                .and_then(|p| p.checked_add(new * (new + 1) / 2))
                .and_then(|p| p.checked_add(b.attention_pairs))
                .filter(|&p| p <= i64::MAX as u64)
                .ok_or_else(|| invalid("requests", "prompts this long", "a step's attention pairs within int64"))?;
            request.num_computed_tokens = cached + new;
        }
        self.plan.batch = b;
        if let Some(swap) = cfg.swap {
            self.plan.swap_time = swap.seconds(self.plan.swap_out_bytes + self.plan.swap_in_bytes);
        }
        Ok(())
    }

    /// The bytes of one KV block (preemption by swap; 0 without).
    fn swap_block_bytes(&self) -> u64 {
        self.config.swap.map_or(0, |s| s.block_bytes)
    }

    /// Preemption (`_preempt_request`): the request's blocks are freed; it waits again, at the
    /// front of the queue. By recompute its progress is reset; by swap (`swap.py`) the blocks
    /// of its computed tokens are copied to the host pool first and its progress kept, unless
    /// the host pool has too few free blocks: then it is recomputed.
    fn preempt_request(&mut self, index: u32) {
        let block_size = self.config.block_size;
        let bytes = self.swap_block_bytes();
        self.kv.free(index);
        let request = &mut self.requests[index as usize];
        request.status = Status::Preempted;
        let blocks = request.num_computed_tokens.div_ceil(block_size);
        if bytes > 0 && blocks > 0 && blocks <= self.host_free {
            self.host_free -= blocks;
            request.swapped_blocks = blocks;
            self.plan.swap_out_bytes += blocks * bytes;
        } else {
            request.num_computed_tokens = 0;
        }
        let rank = self.config.policy.rank(request);
        self.waiting.prepend_request(index, rank);
    }

    /// `mlfq`'s boost: every active request's service counts from now, and the waiting queue
    /// is ranked anew.
    fn boost(&mut self) {
        for &index in &self.running {
            let r = &mut self.requests[index as usize];
            r.service_base = r.num_output_tokens;
        }
        for index in self.waiting.indices() {
            let r = &mut self.requests[index as usize];
            r.service_base = r.num_output_tokens;
        }
        let (policy, requests) = (self.config.policy, &self.requests);
        self.waiting.rekey(|i| policy.rank(&requests[i as usize]));
    }

    /// The model ran the step (`update_from_output`): each request whose tokens are all
    /// computed gets one output token (it finishes at `output_len`); a finished request frees
    /// its blocks at once. Fills `plan.produced` and `plan.finished`.
    fn update(&mut self) -> Result<()> {
        let block_size = self.config.block_size;
        for k in 0..self.plan.scheduled.len() {
            let index = self.plan.scheduled[k].0;
            let request = &mut self.requests[index as usize];
            if request.num_computed_tokens < request.num_tokens() {
                continue; // a chunk of a prompt: no token yet
            }
            request.append_output_tokens(1, block_size)?;
            self.plan.produced.push(index);
            if request.num_output_tokens >= request.output_len {
                request.status = Status::Finished;
                request.release();
                self.kv.free(index);
                self.kv.pool.forget_private(index);
                self.plan.finished.push(index);
            }
        }
        if !self.plan.finished.is_empty() {
            let requests = &self.requests;
            self.running.retain(|&i| requests[i as usize].status != Status::Finished);
        }
        Ok(())
    }

    /// The whole state that decides the steps to come, as numbers (`livelock.rs`): the running
    /// and waiting requests in order with their progress and blocks, and the pool. Room for it
    /// is made first: out of memory is an error.
    fn state(&self, out: &mut Vec<u64>) -> Result<()> {
        let active = self.running.len() + self.waiting.len();
        let held: u64 = self.running.iter().map(|&i| self.kv.num_blocks_held(i)).sum();
        let room =
            3 + 2 * crate::serve::vllm::tiers::MAX_TIERS as u64 + 9 * active as u64 + held + self.kv.pool.state_len();
        try_grow(out, usize::try_from(room).unwrap_or(usize::MAX), "the livelock guard's copy of the state")?;
        // mlfq's boost comes every `boost` steps: where the run stands in that period decides too.
        out.push(match self.config.policy {
            crate::serve::vllm::Policy::Mlfq(m) if m.boost > 0 => self.steps % m.boost,
            _ => 0,
        });
        out.push(self.host_free);
        if let Some(tiers) = &self.tiers {
            out.extend(tiers.state());
        }
        out.push(self.running.len() as u64);
        let start = out.len();
        out.extend(self.running.iter().map(|&i| u64::from(i)));
        self.waiting.write_state(out);
        let active = out.len() - start;
        for k in start..start + active {
            let r = &self.requests[out[k] as usize];
            out.extend([r.status as u64, r.num_computed_tokens, r.num_output_tokens, r.service_base]);
            out.push(r.swapped_blocks);
            self.kv.write_request_state(r.index, out);
        }
        self.kv.pool.write_state(out);
        Ok(())
    }
}

/// The blocks of `request`'s prompt after its `gpu_hits` GPU hits that the tiers hold, into
/// `found` (the tier of each, the fastest holding it): block by block until one no tier holds,
/// at most `num_tokens - 1` tokens in all with the GPU's, as the GPU's lookup (`tiers.py`).
/// Blocks of prompts without content are never stored in the tiers.
fn find_in_tiers(tiers: &Tiers, request: &Request, gpu_hits: usize, block_size: u64, found: &mut Vec<u8>) {
    if request.private {
        return;
    }
    let limit = ((request.num_tokens() - 1) / block_size) as usize;
    for &hash in request.block_hashes.iter().take(limit).skip(gpu_hits) {
        match tiers.find(hash) {
            Some(tier) => found.push(tier),
            None => break,
        }
    }
}

impl seam::Scheduler for Scheduler<'_> {
    fn add_request(&mut self, r: NewRequest<'_>) {
        let caching = self.config.enable_prefix_caching;
        let mut request =
            Request::new(r.index, r.arrival, r.priority, r.prompt_len, r.output_len, r.predicted, caching, r.keys);
        request.external = r.external;
        self.add(request);
    }

    fn has_unfinished_requests(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty()
    }

    fn schedule(&mut self) -> Result<&StepPlan> {
        self.decide()?;
        Ok(&self.plan)
    }

    fn update_from_output(&mut self) -> Result<&StepPlan> {
        self.update()?;
        Ok(&self.plan)
    }

    fn plan(&self) -> &StepPlan {
        &self.plan
    }

    fn num_output_tokens(&self, index: u32) -> u64 {
        self.requests[index as usize].num_output_tokens
    }

    fn num_waiting(&self) -> usize {
        self.waiting.len()
    }

    fn occupancy(&self) -> Occupancy {
        let free = self.kv.pool.num_free_blocks();
        Occupancy { used: self.config.num_blocks - 1 - free, free, cached: self.kv.pool.num_cached_hashes() }
    }

    fn running(&self) -> &[u32] {
        &self.running
    }

    fn write_state(&self, out: &mut Vec<u64>) -> Result<()> {
        self.state(out)
    }

    /// Names the requests caught in the cycle.
    fn livelock_error(&self, stalled: &str) -> Error {
        let mut caught: Vec<u32> = self.running.iter().copied().chain(self.waiting.indices()).collect();
        caught.sort_unstable();
        let shown: Vec<String> = caught.iter().take(5).map(|i| i.to_string()).collect();
        let more = if caught.len() > 5 { format!(" (and {} more)", caught.len() - 5) } else { String::new() };
        let policy = self.config.policy.name();
        invalid(
            "requests",
            format!("{}{more}", shown.join(", ")),
            format!(
                "requests the scheduler can serve: with policy='{policy}' these preempt one another forever, the \
                 same steps repeating without a token: {stalled} (the policy preempts the first running request of \
                 the largest key, as vLLM 0.33.0 does under priority with (priority, arrival), so requests that tie \
                 keep resetting each other's progress); give them distinct priorities or arrivals, or use \
                 policy='fcfs'"
            ),
        )
    }

    /// A step is quiet when every running request decoded its one next token and nothing was
    /// admitted, preempted, allocated, entered in the prefix cache or finished. The steps that
    /// follow are the same but for their token counts until some request needs a new block,
    /// fills a block (whose hash would enter the map), or finishes. The pool does not change in
    /// between, so the waiting queue's head, refused in the quiet step, is refused again in
    /// each of them.
    fn tier_counts(&self) -> &[TierCounts] {
        self.tiers.as_ref().map_or(&[], |t| &t.counts)
    }

    fn quiet_stretch(&self) -> QuietStretch {
        let plan = &self.plan;
        let quiet = plan.preempted.is_empty()
            && plan.admitted.is_empty()
            && plan.finished.is_empty()
            && plan.batch.prefill_seqs == 0
            && plan.scheduled.len() == self.running.len()
            && self.pool_before == (self.kv.pool.allocations, self.kv.pool.registrations);
        if !quiet || self.running.is_empty() {
            return QuietStretch::default();
        }
        let block_size = self.config.block_size;
        // How many steps each running request can take without an event: step i (from 0)
        // puts its token count T + i in the KV cache. A boost is an event (it re-ranks).
        let mut steps = self.config.policy.steps_to_boost(self.steps);
        if steps == 0 {
            return QuietStretch::default();
        }
        let mut context_tokens = 0;
        for &index in &self.running {
            let r = &self.requests[index as usize];
            let tokens = r.num_tokens();
            // No new block: T + i <= held * block_size.
            let held = self.kv.num_blocks_held(index);
            steps = steps.min((held * block_size + 1).saturating_sub(tokens));
            // No block filled (its hash would enter the map): T + i < (cached + 1) * block_size.
            if self.config.enable_prefix_caching {
                let cached = self.kv.num_cached_blocks(index);
                steps = steps.min(((cached + 1) * block_size).saturating_sub(tokens));
            }
            // No finish: the output count after step i, O + i + 1, stays below output_len.
            steps = steps.min(r.output_len.saturating_sub(r.num_output_tokens + 1));
            if steps == 0 {
                return QuietStretch::default(); // with a large batch, some request is always at an event
            }
            context_tokens += r.num_computed_tokens;
        }
        QuietStretch { steps, context_tokens }
    }

    fn skip_quiet(&mut self, steps: u64) -> Result<()> {
        self.steps += steps;
        let block_size = self.config.block_size;
        for &index in &self.running {
            let r = &mut self.requests[index as usize];
            r.num_computed_tokens += steps;
            r.computed_high = r.computed_high.max(r.num_computed_tokens);
            r.append_output_tokens(steps, block_size)?;
        }
        Ok(())
    }
}
