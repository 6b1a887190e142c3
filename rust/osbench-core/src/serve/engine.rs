//! The engine loop (`python/osbench/serve/reference.py: run`): the clock, arrivals, one
//! scheduler step after another, output tokens at each step's end; and the decode jump.
//!
//! **The decode jump.** After a *quiet* step (every running request decoded its one next
//! token; nothing was admitted, preempted, allocated, entered in the prefix cache or
//! finished), the steps that follow are the same but for their token counts until some
//! request needs a new block, fills a block (whose hash enters the map), or finishes, or a
//! request arrives. The pool does not change in between, so the waiting queue's head, refused
//! in the quiet step, is refused again in each of them. Those steps are recorded one by one,
//! each with its own Batch and duration (the same arithmetic as a single step), but the
//! requests are updated once, at the end: the work per step is O(1) instead of O(batch).

use super::livelock::Guard;
use super::request::{Request, Status};
use super::scheduler::Scheduler;
use super::step_time::{Batch, StepTime};
use super::{Config, Options, Record, Requests, Run};
use crate::error::{internal, invalid, Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Requests scheduled (summed over steps) between two looks at the cancel flag: a
/// millisecond or two of work.
const CHECK_WORK: u64 = 1 << 16;

/// Collects a run step by step (`run.py: Recorder`).
struct Recorder {
    run: Run,
}

impl Recorder {
    fn new(n: usize, record: bool) -> Self {
        let mut run = Run {
            admitted: vec![f64::NAN; n],
            first_token: vec![f64::NAN; n],
            finish: vec![f64::NAN; n],
            preemptions: vec![0; n],
            cached_tokens: vec![0; n],
            ..Run::default()
        };
        if record {
            run.record = Some(Record {
                scheduled_offsets: vec![0],
                preempted_offsets: vec![0],
                admitted_offsets: vec![0],
                ..Record::default()
            });
        }
        Recorder { run }
    }

    /// One step's row: its start, duration and Batch, and the engine's state after it.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        start: f64,
        duration: f64,
        b: &Batch,
        num_preempted: usize,
        num_waiting: usize,
        blocks_used: u64,
        blocks_cached: usize,
    ) {
        let s = &mut self.run;
        s.start.push(start);
        s.duration.push(duration);
        s.num_seqs.push(b.num_seqs as i64);
        s.prefill_seqs.push(b.prefill_seqs as i64);
        s.prefill_tokens.push(b.prefill_tokens as i64);
        s.decode_seqs.push(b.decode_seqs as i64);
        s.context_tokens.push(b.context_tokens as i64);
        s.attention_pairs.push(b.attention_pairs as i64);
        s.num_preempted.push(num_preempted as i64);
        s.num_waiting.push(num_waiting as i64);
        s.blocks_used.push(blocks_used as i64);
        s.blocks_cached.push(blocks_cached as i64);
    }
}

fn check_cancel(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// The loop. Inputs are checked (`super::simulate`).
pub fn run(reqs: &Requests, cfg: &Config, step_time: &StepTime, options: Options, cancel: &AtomicBool) -> Result<Run> {
    let n = reqs.arrival.len();
    let usable_blocks = cfg.num_blocks - 1;
    let mut sched = Scheduler::new(cfg, n);
    let mut rec = Recorder::new(n, options.record);
    let mut now = 0.0_f64;
    let mut next_arrival = 0;
    let mut num_finished = 0;
    let mut work = 0_u64;
    let mut guard = Guard::default();
    while num_finished < n {
        if work >= CHECK_WORK {
            check_cancel(cancel)?;
            work = 0;
        }
        let arrived = next_arrival;
        while next_arrival < n && reqs.arrival[next_arrival] <= now {
            sched.add_request(new_request(reqs, cfg, next_arrival));
            next_arrival += 1;
        }
        let arrived = next_arrival > arrived;
        if !sched.has_unfinished_requests() {
            now = reqs.arrival[next_arrival];
            continue;
        }
        let before = (sched.kv.pool.allocations, sched.kv.pool.registrations);
        sched.schedule()?;
        if sched.plan.scheduled.is_empty() {
            return Err(internal(format!("the engine scheduled nothing at t={now} with requests waiting")));
        }
        let batch = sched.plan.batch;
        let num_waiting = sched.waiting.len();
        let free_blocks = sched.kv.pool.num_free_blocks();
        let duration = step_time.duration_with(&batch, &sched.plan.prefill_chunks)?;
        let end = now + duration;
        sched.update_from_output();
        let plan = &sched.plan;
        for &index in &plan.produced {
            let request = &sched.requests[index as usize];
            if request.num_output_tokens == 1 {
                rec.run.first_token[index as usize] = end;
            }
            if request.status == Status::Finished {
                rec.run.finish[index as usize] = end;
            }
        }
        num_finished += plan.finished.len();
        for &index in &plan.preempted {
            rec.run.preemptions[index as usize] += 1;
        }
        for &(index, hit) in &plan.admitted {
            if rec.run.admitted[index as usize].is_nan() {
                rec.run.admitted[index as usize] = now;
                rec.run.cached_tokens[index as usize] = hit as i64;
            }
        }
        let blocks_cached = sched.kv.pool.num_cached_hashes();
        rec.row(now, duration, &batch, plan.preempted.len(), num_waiting, usable_blocks - free_blocks, blocks_cached);
        if let Some(r) = rec.run.record.as_mut() {
            r.scheduled_request.extend(plan.scheduled.iter().map(|&(i, _)| i64::from(i)));
            r.scheduled_tokens.extend(plan.scheduled.iter().map(|&(_, t)| t as i64));
            r.scheduled_offsets.push(r.scheduled_request.len() as i64);
            r.preempted_request.extend(plan.preempted.iter().map(|&i| i64::from(i)));
            r.preempted_offsets.push(r.preempted_request.len() as i64);
            r.admitted_request.extend(plan.admitted.iter().map(|&(i, _)| i64::from(i)));
            r.admitted_hit_tokens.extend(plan.admitted.iter().map(|&(_, h)| h as i64));
            r.admitted_offsets.push(r.admitted_request.len() as i64);
            r.free_blocks.push(free_blocks as i64);
        }
        work += plan.scheduled.len() as u64 + 1;
        now = end;
        let pending = next_arrival < n;
        if guard.repeats(arrived || !plan.produced.is_empty(), |out| {
            // Until every request has arrived, a repeat must keep the clock too.
            out.push(if pending { now.to_bits() } else { 0 });
            sched.write_state(out);
        }) {
            return Err(livelock(&sched, cfg));
        }
        let quiet = plan.preempted.is_empty()
            && plan.admitted.is_empty()
            && plan.finished.is_empty()
            && batch.prefill_seqs == 0
            && plan.scheduled.len() == sched.running.len()
            && before == (sched.kv.pool.allocations, sched.kv.pool.registrations);
        if options.jump && quiet {
            let state = After { num_waiting, blocks_used: usable_blocks - free_blocks, free_blocks, blocks_cached };
            let (steps, t) = jump(&mut sched, &mut rec, cfg, step_time, reqs, next_arrival, now, state, cancel)?;
            now = t;
            rec.run.jumped_steps += steps;
            work += steps;
        }
    }
    Ok(rec.run)
}

/// The error of a run that repeats itself forever, naming the requests caught in it.
fn livelock(sched: &Scheduler, cfg: &Config) -> Error {
    let mut caught: Vec<u32> = sched.running.iter().copied().chain(sched.waiting.indices()).collect();
    caught.sort_unstable();
    let shown: Vec<String> = caught.iter().take(5).map(|i| i.to_string()).collect();
    let more = if caught.len() > 5 { format!(" (and {} more)", caught.len() - 5) } else { String::new() };
    let policy = if cfg.priority { "priority" } else { "fcfs" };
    invalid(
        "requests",
        format!("{}{more}", shown.join(", ")),
        format!(
            "requests the scheduler can serve: with policy='{policy}' these preempt one another forever, the \
             same steps repeating without a token (vLLM 0.33.0 preempts the first running request of the \
             largest (priority, arrival), so requests that tie keep resetting each other's progress); give \
             them distinct priorities or arrivals, or use policy='fcfs'"
        ),
    )
}

/// Request `i` as it arrives, its prompt's block hashes chained from its content keys.
fn new_request(reqs: &Requests, cfg: &Config, i: usize) -> Request {
    let keys = if cfg.enable_prefix_caching {
        let (a, b) = (reqs.key_offsets[i] as usize, reqs.key_offsets[i + 1] as usize);
        Some(&reqs.keys[a..b])
    } else {
        None
    };
    let priority = if reqs.priority.is_empty() { 0 } else { reqs.priority[i] };
    Request::new(i as u32, reqs.arrival[i], priority, reqs.prompt_len[i] as u64, reqs.output_len[i] as u64, keys)
}

/// The engine's state after a quiet step, which the jumped steps keep.
struct After {
    num_waiting: usize,
    blocks_used: u64,
    free_blocks: u64,
    blocks_cached: usize,
}

/// The steps after a quiet one that change nothing but token counts, recorded; returns how
/// many and the clock after them.
#[allow(clippy::too_many_arguments)]
fn jump(
    sched: &mut Scheduler,
    rec: &mut Recorder,
    cfg: &Config,
    step_time: &StepTime,
    reqs: &Requests,
    next_arrival: usize,
    mut now: f64,
    state: After,
    cancel: &AtomicBool,
) -> Result<(u64, f64)> {
    let block_size = cfg.block_size;
    // How many steps each running request can take without an event: step i (from 0) puts
    // its token count T + i in the KV cache.
    let mut steps = u64::MAX;
    let mut context = 0;
    for &index in &sched.running {
        let r = &sched.requests[index as usize];
        let tokens = r.num_tokens();
        // No new block: T + i <= held * block_size.
        let held = sched.kv.num_blocks_held(index);
        steps = steps.min((held * block_size + 1).saturating_sub(tokens));
        // No block filled (its hash would enter the map): T + i < (cached + 1) * block_size.
        if cfg.enable_prefix_caching {
            let cached = sched.kv.num_cached_blocks(index);
            steps = steps.min(((cached + 1) * block_size).saturating_sub(tokens));
        }
        // No finish: the output count after step i, O + i + 1, stays below output_len.
        steps = steps.min(r.output_len.saturating_sub(r.num_output_tokens + 1));
        if steps == 0 {
            return Ok((0, now)); // with a large batch, some request is always at an event
        }
        context += r.num_computed_tokens;
    }
    if steps == u64::MAX {
        return Ok((0, now));
    }
    let num_seqs = sched.running.len() as u64;
    let next_time = reqs.arrival.get(next_arrival).copied().unwrap_or(f64::INFINITY);
    let mut done = 0;
    while done < steps && next_time > now {
        if done % CHECK_WORK == CHECK_WORK - 1 {
            check_cancel(cancel)?;
        }
        let batch = Batch {
            num_seqs,
            prefill_seqs: 0,
            prefill_tokens: 0,
            decode_seqs: num_seqs,
            context_tokens: context,
            attention_pairs: context + num_seqs,
        };
        let duration = step_time.duration(&batch)?;
        rec.row(now, duration, &batch, 0, state.num_waiting, state.blocks_used, state.blocks_cached);
        if let Some(r) = rec.run.record.as_mut() {
            r.scheduled_request.extend(sched.running.iter().map(|&i| i64::from(i)));
            r.scheduled_tokens.extend(std::iter::repeat_n(1, sched.running.len()));
            r.scheduled_offsets.push(r.scheduled_request.len() as i64);
            r.preempted_offsets.push(r.preempted_request.len() as i64);
            r.admitted_offsets.push(r.admitted_request.len() as i64);
            r.free_blocks.push(state.free_blocks as i64);
        }
        now += duration;
        context += num_seqs;
        done += 1;
    }
    for &index in &sched.running {
        let r = &mut sched.requests[index as usize];
        r.num_computed_tokens += done;
        r.append_output_tokens(done, block_size);
    }
    Ok((done, now))
}
