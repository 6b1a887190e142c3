//! A prefill pool handing requests to a decode pool on one clock
//! (`python/osbench/serve/pools.py: drive_disaggregated`, the reference, which states the
//! rules; equal to it decision for decision and step for step). Each instance is an
//! [`Engine`](super::engine::Engine) with its own scheduler and KV; a request is served on a
//! prefill instance with one output token, its prompt's KV moves over the instance's link once
//! its prefill completes (one transfer at a time per instance), and a decode instance takes it
//! with that KV as computed. The loop takes the earliest event: a send, a KV arrival, or a busy
//! instance's next step (on a tie a send, then a KV arrival, then the prefill instances by
//! index, then the decode instances by index).
//!
//! **The decode jump.** A decode instance's quiet stretch stops short of the next KV arrival,
//! which may come from a transfer under way, or from a prefill step not yet taken (it ends no
//! earlier than it starts), or from a request not yet sent; under closed-loop clients a send
//! waiting for a finish waits for the end of some decode instance's step.

use super::cluster::{check_router_keys, Replica};
use super::routers::{self, Arrival, View};
use super::scheduler::{NewRequest, Scheduler};
use super::send::Sender;
use super::step_time::StepTime;
use super::{Options, Requests, Run};
use crate::cancel::Cancel;
use crate::error::{internal, invalid, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The link between the pools (`links.py: Link`): bytes per second one way per GPU (infinity:
/// instant) and seconds per transfer; and how the KV takes it: after the prefill (`layers` 0)
/// or layer by layer during its last step, over the model's `layers`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub bandwidth: f64,
    pub latency: f64,
    pub layers: u32,
}

impl Link {
    /// Refuses a bandwidth that is not positive and a latency that is not finite and >= 0.
    pub fn new(bandwidth: f64, latency: f64, layers: u32) -> Result<Link> {
        if bandwidth.is_nan() || bandwidth <= 0.0 {
            return Err(invalid("bandwidth", bandwidth, "a positive number of bytes per second (inf: instant)"));
        }
        if !(latency.is_finite() && latency >= 0.0) {
            return Err(invalid("latency", latency, "finite seconds >= 0"));
        }
        Ok(Link { bandwidth, latency, layers })
    }

    /// A prompt's KV of `bytes` on a link free from `free`, its prefill's last step running
    /// from `start` to `end`: when its first byte goes on the wire and when its last is off it
    /// (`pools.py: transfer`).
    fn transfer(&self, free: f64, bytes: f64, start: f64, end: f64) -> (f64, f64) {
        let wire = self.seconds(bytes);
        let layers = self.layers;
        if layers == 0 {
            let begin = end.max(free);
            return (begin, begin + wire);
        }
        let share = wire / f64::from(layers);
        let (mut begin, mut done) = (free, free);
        for layer in 0..layers {
            let ready = if layer == layers - 1 {
                end
            } else {
                start + (end - start) * f64::from(layer + 1) / f64::from(layers)
            };
            let go = ready.max(done);
            if layer == 0 {
                begin = go;
            }
            done = go + share;
        }
        (begin, done)
    }

    /// Seconds `bytes` take on the wire (`Link.seconds`).
    fn seconds(&self, bytes: f64) -> f64 {
        if self.bandwidth.is_infinite() {
            0.0
        } else {
            bytes / self.bandwidth
        }
    }
}

/// The prompts' block keys at a router's granularity and their offsets (empty unless the
/// router reads them).
pub type RouterKeys<'a> = (&'a [u64], &'a [i64]);

/// One pool: its schedulers, router, step time and KV (`pools.py: Pool`), and the prompts'
/// block keys at its router's granularity (for a router that reads them).
pub struct Pool<'a, S: Scheduler> {
    pub scheds: Vec<S>,
    pub spec: routers::Spec,
    pub step_time: &'a StepTime,
    pub usable_blocks: u64,
    pub block_size: u64,
    pub router_keys: &'a [u64],
    pub router_key_offsets: &'a [i64],
}

/// One run of the two pools (`pools.py: DisaggRun`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DisaggRun {
    pub prefill_replica: Vec<i64>,
    pub decode_replica: Vec<i64>,
    pub transfer_start: Vec<f64>,
    pub kv_arrival: Vec<f64>,
    pub prefill_runs: Vec<Run>,
    pub decode_runs: Vec<Run>,
    /// Per decode instance: the requests it served, in the order it received them.
    pub decode_order: Vec<Vec<i64>>,
}

struct Side<'a, S: Scheduler> {
    reps: Vec<Replica<'a, S>>,
    router: Box<dyn routers::Router>,
    views: Vec<View>,
    usable_blocks: u64,
    block_size: u64,
    spec: routers::Spec,
    keys: &'a [u64],
    offsets: &'a [i64],
}

impl<'a, S: Scheduler> Side<'a, S> {
    fn new(pool: Pool<'a, S>, options: Options, cancel: &'a Cancel, n: usize) -> Result<Self> {
        let num = pool.scheds.len();
        check_router_keys(&pool.spec, n, pool.router_keys, pool.router_key_offsets)?;
        let capacity = n.div_ceil(num.max(1));
        let reps = Replica::all(pool.scheds, pool.step_time, options, cancel, capacity);
        Ok(Side {
            reps,
            router: pool.spec.build(num),
            views: vec![View::default(); num],
            usable_blocks: pool.usable_blocks,
            block_size: pool.block_size,
            spec: pool.spec,
            keys: pool.router_keys,
            offsets: pool.router_key_offsets,
        })
    }

    /// The instance the router picks for request `i` at `now` (`pools.py: views`).
    fn route(
        &mut self,
        i: usize,
        now: f64,
        prompt_len: u64,
        output_len: u64,
        tokens: &dyn Fn(u32) -> u64,
    ) -> Result<usize> {
        for (view, rep) in self.views.iter_mut().zip(self.reps.iter_mut()) {
            *view = rep.view(now, tokens, self.usable_blocks, self.block_size);
        }
        let keys = if self.spec.needs_keys() {
            &self.keys[self.offsets[i] as usize..self.offsets[i + 1] as usize]
        } else {
            &[]
        };
        let k = self.router.route(&Arrival { index: i, arrival: now, prompt_len, output_len, keys }, &self.views);
        if k >= self.reps.len() {
            return Err(internal(format!("the router chose instance {k} of {}", self.reps.len())));
        }
        Ok(k)
    }

    /// Request `i` reaches instance `k` at `when` (`pools.py: give`).
    fn give(&mut self, k: usize, i: usize, when: f64, request: NewRequest<'_>, tokens: u64) -> Result<()> {
        let rep = &mut self.reps[k];
        let prompt_len = request.prompt_len;
        rep.engine.add_request(NewRequest { index: rep.given.len() as u32, arrival: when, ..request })?;
        rep.given.push(i as u32);
        let total = rep.blocks[rep.blocks.len() - 1] + prompt_len.div_ceil(self.block_size);
        rep.blocks.push(total);
        rep.outstanding += 1;
        rep.tokens += tokens;
        Ok(())
    }

    /// The next step of instance `k` (`pools.py: step`): when it starts and ends, and the
    /// requests it finished, in order.
    fn step(
        &mut self,
        k: usize,
        t: f64,
        next: Option<f64>,
        tokens: &dyn Fn(u32) -> u64,
    ) -> Result<(f64, f64, Vec<u32>)> {
        let (start, end, finished) = self.reps[k].step(t, next, tokens)?;
        Ok((start, end, finished.to_vec()))
    }

    /// The earliest next step of its instances other than `except`, infinity when none.
    fn earliest(&self, except: Option<usize>) -> f64 {
        let others = self.reps.iter().enumerate().filter(|&(j, _)| Some(j) != except);
        others.filter_map(|(_, r)| r.engine.next_event_time()).fold(f64::INFINITY, f64::min)
    }
}

/// Request `i` of `reqs` as an instance receives it (numbered by the instance when given).
fn request<'r>(reqs: &Requests<'r>, i: usize, output_len: u64, external: u64) -> NewRequest<'r> {
    let (a, b) = (reqs.key_offsets.get(i), reqs.key_offsets.get(i + 1));
    let keys = match (a, b) {
        (Some(&a), Some(&b)) => Some(&reqs.keys[a as usize..b as usize]),
        _ => None,
    };
    let priority = if reqs.priority.is_empty() { 0 } else { reqs.priority[i] };
    let predicted = if reqs.predicted.is_empty() { output_len as i64 } else { reqs.predicted[i] };
    NewRequest {
        index: 0,
        arrival: 0.0,
        priority,
        prompt_len: reqs.prompt_len[i] as u64,
        output_len,
        predicted: predicted as u64,
        keys,
        external,
    }
}

/// Serve `reqs` (checked: [`super::simulate_disaggregated`]) on the `prefill` and `decode`
/// pools joined by `link`, request `i`'s KV taking `kv_bytes[i]` bytes per GPU.
/// `prefill_predicted`: the predicted output lengths the prefill instances see (empty: one).
#[allow(clippy::too_many_arguments)]
pub fn run<S: Scheduler>(
    reqs: &Requests,
    prefill_predicted: &[i64],
    prefill: Pool<'_, S>,
    decode: Pool<'_, S>,
    link: Link,
    kv_bytes: &[i64],
    options: Options,
    cancel: &Cancel,
) -> Result<DisaggRun> {
    let n = reqs.arrival.len();
    for (name, num) in [("prefill", prefill.scheds.len()), ("decode", decode.scheds.len())] {
        if !(1..=super::cluster::MAX_REPLICAS).contains(&num) {
            return Err(invalid(name, num, format!("a positive integer up to {}", super::cluster::MAX_REPLICAS)));
        }
    }
    if kv_bytes.len() != n || kv_bytes.iter().any(|&b| b < 0) {
        return Err(invalid(
            "kv_bytes",
            format!("{} entries", kv_bytes.len()),
            format!("{n} counts >= 0, one per request"),
        ));
    }
    let mut pre = Side::new(prefill, options, cancel, n)?;
    let mut dec = Side::new(decode, options, cancel, n)?;
    let pre_reqs = Requests { predicted: prefill_predicted, ..*reqs };
    let pre_tokens = |i: u32| reqs.prompt_len[i as usize] as u64 + 1;
    let dec_tokens = |i: u32| (reqs.prompt_len[i as usize] + reqs.output_len[i as usize]) as u64;
    let mut sender = Sender::new(reqs.arrival, options.concurrency, options.turnaround, options.warmup);
    let mut out = DisaggRun {
        prefill_replica: vec![0; n],
        decode_replica: vec![0; n],
        transfer_start: vec![0.0; n],
        kv_arrival: vec![0.0; n],
        ..DisaggRun::default()
    };
    let mut link_free = vec![0.0f64; pre.reps.len()];
    // (when's bits: all >= 0, order of transfer, request), earliest first.
    let mut arrivals: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
    let mut transfers = 0u64;
    let mut num_finished = 0;
    while num_finished < n {
        let t_send = sender.time();
        let t_kv = arrivals.peek().map_or(f64::INFINITY, |&Reverse((t, _, _))| f64::from_bits(t));
        let mut busy: Option<(bool, usize, f64)> = None;
        let sides = [(true, &pre.reps), (false, &dec.reps)];
        for (is_pre, reps) in sides {
            for (k, rep) in reps.iter().enumerate() {
                if let Some(t) = rep.engine.next_event_time() {
                    if busy.is_none_or(|(_, _, b)| t < b) {
                        busy = Some((is_pre, k, t));
                    }
                }
            }
        }
        let t_step = busy.map_or(f64::INFINITY, |(_, _, t)| t);
        if t_send <= t_kv && t_send <= t_step {
            if t_send == f64::INFINITY {
                return Err(internal("no request can be sent and no instance runs"));
            }
            let (i, sent) = sender.send();
            let prompt_len = reqs.prompt_len[i] as u64;
            let k = pre.route(i, sent, prompt_len, 1, &pre_tokens)?;
            out.prefill_replica[i] = k as i64;
            pre.give(k, i, sent, request(&pre_reqs, i, 1, 0), prompt_len + 1)?;
        } else if t_kv <= t_step {
            let Some(Reverse((_, _, i))) = arrivals.pop() else { return Err(internal("no KV arrival")) };
            let i = i as usize;
            let when = t_kv;
            let (prompt_len, output_len) = (reqs.prompt_len[i] as u64, reqs.output_len[i] as u64);
            let k = dec.route(i, when, prompt_len, output_len, &dec_tokens)?;
            out.decode_replica[i] = k as i64;
            dec.give(k, i, when, request(reqs, i, output_len, prompt_len - 1), prompt_len + output_len)?;
        } else {
            let Some((is_pre, k, t)) = busy else { return Err(internal("no instance to step")) };
            if is_pre {
                // Its requests come from sends alone.
                let next = if !sender.more() {
                    None
                } else if t_send.is_finite() {
                    Some(t_send)
                } else {
                    Some(pre.earliest(Some(k)).min(dec.earliest(None)).min(t_kv))
                };
                let (started, end, finished) = pre.step(k, t, next, &pre_tokens)?;
                for i in finished {
                    let (begin, free) = link.transfer(link_free[k], kv_bytes[i as usize] as f64, started, end);
                    link_free[k] = free;
                    let arrive = free + link.latency;
                    out.transfer_start[i as usize] = begin;
                    out.kv_arrival[i as usize] = arrive;
                    arrivals.push(Reverse((arrive.to_bits(), transfers, i)));
                    transfers += 1;
                }
            } else {
                // Its requests come from KV arrivals: under way, from prefill steps to come, or
                // from sends to come (or, for a send waiting for a finish, the other decode
                // instances' next steps).
                let mut bound = t_kv.min(pre.earliest(None));
                if sender.more() {
                    bound = bound.min(if t_send.is_finite() { t_send } else { dec.earliest(Some(k)) });
                }
                let idle = !sender.more() && arrivals.is_empty() && pre.earliest(None).is_infinite();
                let next = if idle { None } else { Some(bound) };
                let (_, end, finished) = dec.step(k, t, next, &dec_tokens)?;
                num_finished += finished.len();
                sender.finished(end, finished.len())?;
            }
        }
    }
    out.decode_order = dec.reps.iter().map(|r| r.given.iter().map(|&i| i64::from(i)).collect()).collect();
    out.prefill_runs = pre.reps.into_iter().map(|r| r.engine.into_run()).collect();
    out.decode_runs = dec.reps.into_iter().map(|r| r.engine.into_run()).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{simulate_disaggregated, Config, Settings};
    use super::*;
    use crate::error::Error;

    const STEP: StepTime = StepTime::Linear([0.01, 0.0025, 0.005, 0.0]);

    fn config() -> Config {
        Config::new(Settings {
            num_blocks: 10_000,
            block_size: 4,
            max_num_batched_tokens: 64,
            max_num_seqs: 8,
            max_model_len: 4096,
            enable_prefix_caching: false,
            scheduler_reserve_full_isl: false,
            ..Settings::default()
        })
        .unwrap()
    }

    fn run(reqs: &Requests, sizes: (usize, usize), cancel: &Cancel) -> Result<DisaggRun> {
        let cfg = config();
        let bytes = vec![1000; reqs.arrival.len()];
        let specs = (routers::Spec::RoundRobin, routers::Spec::LeastTokens);
        let link = Link::new(1e9, 1e-5, 0)?;
        let no_keys: RouterKeys = (&[], &[]);
        let options = Options::default();
        simulate_disaggregated(
            reqs,
            (&cfg, &cfg),
            (&STEP, &STEP),
            options,
            sizes,
            specs,
            (no_keys, no_keys),
            &[],
            link,
            &bytes,
            cancel,
        )
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        let reqs = Requests { arrival: &[0.0], prompt_len: &[4], output_len: &[2], ..Requests::default() };
        assert!(matches!(run(&reqs, (0, 1), &Cancel::new()), Err(Error::InvalidArgument { name: "prefill", .. })));
        assert!(matches!(run(&reqs, (1, 0), &Cancel::new()), Err(Error::InvalidArgument { name: "decode", .. })));
        for bad in [-1.0, 0.0, f64::NAN] {
            assert!(matches!(Link::new(bad, 0.0, 0), Err(Error::InvalidArgument { name: "bandwidth", .. })));
        }
        assert!(matches!(Link::new(1e9, -1.0, 0), Err(Error::InvalidArgument { name: "latency", .. })));
        let out = run(&reqs, (1, 1), &Cancel::new()).unwrap();
        // The prompt's KV arrives after the prefill's one token, 1000 bytes at 1 GB/s and 10 us later.
        let prefill_end = out.prefill_runs[0].first_token[0];
        assert_eq!(out.transfer_start[0], prefill_end);
        assert!((out.kv_arrival[0] - prefill_end - (1e-6 + 1e-5)).abs() < 1e-15);
    }

    #[test]
    fn a_raised_cancel_flag_stops_a_disaggregated_run() {
        let flood = crate::serve::tests::Flood::new(20_000, 60);
        let reqs = flood.requests();
        assert_eq!(run(&reqs, (2, 2), &Cancel::raised()), Err(Error::Interrupted));
    }
}
