//! Every long loop of the core looks at its cancel throughout its work (not in its first chunk
//! only), stops at the check after the cancel is raised, and reports the units it planned: run
//! with a cancel whose hook is asked at every check, each loop finishes with `done == total`
//! after several asks, and stopped at the third ask it ends early, with part of the work done.

use osbench_core::cache::{self, keys, shards, stream::Stream, Accesses, Options};
use osbench_core::cancel::Cancel;
use osbench_core::mem::{sim, AnyStrategy};
use osbench_core::{radix, sched, Error, Result};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A cancel whose hook is asked at every check of this thread, and raises the cancel at the
/// `stop_at`-th ask (0: never); with the count of asks.
fn asked_every_check(stop_at: u32) -> (Cancel, Arc<AtomicU32>) {
    let asks = Arc::new(AtomicU32::new(0));
    let counted = asks.clone();
    let hook = Box::new(move |_: &Cancel| counted.fetch_add(1, Ordering::Relaxed) + 1 == stop_at);
    (Cancel::polled_every(hook, Duration::ZERO), asks)
}

/// `work` runs to its end with several asks and all its planned units done, and stopped at the
/// third ask it is interrupted with part of them done.
fn checks_throughout<T>(what: &str, work: impl Fn(&Cancel) -> Result<T>) {
    let (cancel, asks) = asked_every_check(0);
    assert!(work(&cancel).is_ok(), "{what}");
    assert!(asks.load(Ordering::Relaxed) >= 4, "{what}: {} checks", asks.load(Ordering::Relaxed));
    assert!(cancel.total() > 0 && cancel.done() == cancel.total(), "{what}: {} of {}", cancel.done(), cancel.total());
    let (cancel, _) = asked_every_check(3);
    assert!(matches!(work(&cancel), Err(Error::Interrupted)), "{what}: not stopped");
    assert!(cancel.done() < cancel.total(), "{what}: stopped after all its work");
}

fn trace(n: u64) -> Vec<u64> {
    (0..n).map(|i| i * 7919 % 5003).collect()
}

#[test]
fn the_cache_loops_check_throughout() {
    let keys = trace(400_000);
    let mut ids = vec![0; keys.len()];
    let n = keys::dense_ids(&keys, &mut ids, &Cancel::new()).unwrap();
    let mut next = vec![0; keys.len()];
    keys::next_use(&ids, n, &mut next, &Cancel::new()).unwrap();
    let a = Accesses::new(&ids, n).unwrap().with_next_use(&next).unwrap();
    let o = Options::default();
    checks_throughout("dense_ids", |c| keys::dense_ids(&keys, &mut vec![0; keys.len()], c));
    checks_throughout("next_use", |c| keys::next_use(&ids, n, &mut vec![0; keys.len()], c));
    checks_throughout("replay", |c| cache::replay("arc", 100, &a, o, &mut [], c));
    checks_throughout("lru curve", |c| cache::curve("lru", &a, &[10, 100], o, 1, c));
    checks_throughout("opt curve", |c| cache::curve("opt", &a, &[10, 100], o, 1, c));
    checks_throughout("grid", |c| cache::replay_grid(&[("fifo", 10), ("sieve", 20)], &a, o, 1, c));
    checks_throughout("spatial sample", |c| shards::spatial_mask(&keys, 0.5, 1, &mut vec![false; keys.len()], c));
    checks_throughout("shards", |c| shards::lru_shards(&keys, 0.5, 1, 10, c));
    checks_throughout("stream", |c| Stream::new("lru", 100, o)?.feed(&keys, None, None, c));
}

#[test]
fn the_scheduling_loops_check_throughout() {
    // A batch of jobs under round robin: far more turns than jobs; progress counts jobs done.
    let size: Vec<f64> = (0..4_000).map(|i| 1.0 + (i % 7) as f64).collect();
    let arrival = vec![0.0; size.len()];
    for policy in ["rr", "ps", "fcfs"] {
        let p = sched::Params { quantum: 0.01, ..sched::Params::default() };
        let p = if policy == "rr" { p } else { sched::Params::default() };
        let (arrival, size) = if policy == "rr" {
            (arrival.clone(), size.clone())
        } else {
            // One event or two a job: enough jobs for several checks.
            let n = 600_000;
            ((0..n).map(|i| i as f64 * 0.5).collect(), vec![1.0; n])
        };
        checks_throughout(policy, |c| sched::simulate(policy, &arrival, &size, &[], &[], &p, c));
    }
}

#[test]
fn the_memory_and_radix_loops_check_throughout() {
    let n = 100_000;
    let arrival: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let duration = vec![10.0; n];
    let (initial, final_size) = (vec![1; n], vec![4; n]);
    let r = sim::Requests { arrival: &arrival, duration: &duration, initial: &initial, final_size: &final_size };
    checks_throughout("mem.simulate", |c| {
        let mut s = AnyStrategy::new("first", 1_000, n, 16, 4)?;
        sim::simulate(&mut s, &r, 1_000, false, c)
    });
    let tokens: Vec<i64> = (0..20_000).map(|i| i % 97).collect();
    let offsets: Vec<i64> = (0..=2_000).map(|i| i * 10).collect();
    let prompts = radix::Sequences::new("requests", &tokens, &offsets).unwrap();
    checks_throughout("radix.replay", |c| {
        let mut mode = radix::new_mode("prefix", Some(500), 1)?;
        radix::replay(mode.as_mut(), prompts, None, &mut [], c)
    });
}
