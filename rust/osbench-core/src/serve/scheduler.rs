//! The scheduler (`vllm/v1/core/sched/scheduler.py: Scheduler`): the waiting queue, the
//! running list, and `schedule()` / `update_from_output()`, one pair per engine step. Every
//! loop and tie-break is that of `python/osbench/serve/reference.py: Scheduler`.

use super::kv_cache_manager::KvCacheManager;
use super::queue::WaitingQueue;
use super::request::{Request, Status};
use super::step_time::Batch;
use super::Config;
use crate::error::{invalid, Result};

/// What one call of the scheduler decided (`SchedulerOutput`), reused from step to step.
#[derive(Debug, Clone, Default)]
pub struct StepPlan {
    /// Requests scheduled, in scheduling order (running ones, then admissions), with their
    /// new tokens.
    pub scheduled: Vec<(u32, u64)>,
    pub preempted: Vec<u32>,
    /// Requests admitted from the waiting queue, with their prefix-hit tokens.
    pub admitted: Vec<(u32, u64)>,
    pub batch: Batch,
    /// `(new tokens, tokens cached before the step)` of each prefill request, in order.
    pub prefill_chunks: Vec<(u64, u64)>,
    /// Requests that got an output token, and those that finished, in order.
    pub produced: Vec<u32>,
    pub finished: Vec<u32>,
}

impl StepPlan {
    fn clear(&mut self) {
        self.scheduled.clear();
        self.preempted.clear();
        self.admitted.clear();
        self.produced.clear();
        self.finished.clear();
        self.prefill_chunks.clear();
        self.batch = Batch::default();
    }
}

#[derive(Debug, Clone)]
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
            waiting: WaitingQueue::new(config.priority),
            running: Vec::new(),
            requests: Vec::with_capacity(num_requests),
            plan: StepPlan::default(),
            hits: Vec::new(),
        }
    }

    /// A new arrival joins the waiting queue (`add_request`). Requests arrive in index order.
    pub fn add_request(&mut self, request: Request) {
        debug_assert_eq!(request.index as usize, self.requests.len());
        self.waiting.add_request(request.index, request.priority, request.arrival);
        self.requests.push(request);
    }

    pub fn has_unfinished_requests(&self) -> bool {
        !self.running.is_empty() || !self.waiting.is_empty()
    }

    /// Decide the step into `self.plan` (`schedule`).
    pub fn schedule(&mut self) -> Result<()> {
        let cfg = self.config;
        self.plan.clear();
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
                // No blocks: preempt the lowest-priority running request and retry.
                let victim = if cfg.priority {
                    let victim_index = self.least_urgent_running();
                    let victim = self.running.remove(victim_index);
                    if victim_index < req_index {
                        req_index -= 1;
                    }
                    // Already scheduled this step: its tokens come back.
                    if let Some(pos) = self.plan.scheduled.iter().position(|&(i, _)| i == victim) {
                        token_budget += self.plan.scheduled.remove(pos).1;
                    }
                    victim
                } else {
                    self.running.pop().expect("the request being scheduled is running")
                };
                self.preempt_request(victim);
                self.plan.preempted.push(victim);
                if victim == index {
                    break; // nothing left to preempt: it cannot run this step
                }
            }
            if !allocated {
                if cfg.priority && self.requests[index as usize].status == Status::Preempted {
                    continue; // it preempted itself; the more urgent requests after it may still fit
                }
                break;
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
                let num_hit_tokens = self.kv.get_computed_blocks(request, &mut self.hits);
                let mut num_new_tokens = request.num_tokens() - num_hit_tokens;
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
                    num_new_tokens,
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
                request.num_computed_tokens = num_hit_tokens;
                self.plan.scheduled.push((index, num_new_tokens));
                self.plan.admitted.push((index, num_hit_tokens));
                token_budget -= num_new_tokens;
            }
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
            b.attention_pairs = new
                .checked_mul(cached)
                .and_then(|p| p.checked_add(new * (new + 1) / 2))
                .and_then(|p| p.checked_add(b.attention_pairs))
                .filter(|&p| p <= i64::MAX as u64)
                .ok_or_else(|| invalid("requests", "prompts this long", "a step's attention pairs within int64"))?;
            request.num_computed_tokens = cached + new;
        }
        self.plan.batch = b;
        Ok(())
    }

    /// Under `policy="priority"`, the running request to preempt: the largest (priority,
    /// arrival), the first such in running order (Python's `max`).
    fn least_urgent_running(&self) -> usize {
        let key = |i: u32| {
            let r = &self.requests[i as usize];
            (r.priority, r.arrival)
        };
        let mut best = 0;
        for pos in 1..self.running.len() {
            let (p, a) = key(self.running[pos]);
            let (bp, ba) = key(self.running[best]);
            if p > bp || (p == bp && a > ba) {
                best = pos;
            }
        }
        best
    }

    /// Recompute preemption (`_preempt_request`): the request's blocks are freed and its
    /// progress reset; it waits again, at the front of the queue.
    fn preempt_request(&mut self, index: u32) {
        self.kv.free(index);
        let request = &mut self.requests[index as usize];
        request.status = Status::Preempted;
        request.num_computed_tokens = 0;
        self.waiting.prepend_request(index, request.priority, request.arrival);
    }

    /// The model ran the step (`update_from_output`): each request whose tokens are all
    /// computed gets one output token (it finishes at `output_len`); a finished request frees
    /// its blocks at once. Fills `plan.produced` and `plan.finished`.
    pub fn update_from_output(&mut self) {
        let block_size = self.config.block_size;
        for k in 0..self.plan.scheduled.len() {
            let index = self.plan.scheduled[k].0;
            let request = &mut self.requests[index as usize];
            if request.num_computed_tokens < request.num_tokens() {
                continue; // a chunk of a prompt: no token yet
            }
            request.append_output_tokens(1, block_size);
            self.plan.produced.push(index);
            if request.num_output_tokens >= request.output_len {
                request.status = Status::Finished;
                request.release();
                self.kv.free(index);
                self.plan.finished.push(index);
            }
        }
        if !self.plan.finished.is_empty() {
            let requests = &self.requests;
            self.running.retain(|&i| requests[i as usize].status != Status::Finished);
        }
    }

    /// The whole state that decides the steps to come, as numbers (`livelock.rs`): the running
    /// and waiting requests in order with their progress and blocks, and the pool.
    pub fn write_state(&self, out: &mut Vec<u64>) {
        out.push(self.running.len() as u64);
        let start = out.len();
        out.extend(self.running.iter().map(|&i| u64::from(i)));
        self.waiting.write_state(out);
        let active = out.len() - start;
        for k in start..start + active {
            let r = &self.requests[out[k] as usize];
            out.extend([r.status as u64, r.num_computed_tokens, r.num_output_tokens]);
            self.kv.write_request_state(r.index, out);
        }
        self.kv.pool.write_state(out);
    }
}
