//! Core tests: golden facts and the agreement of curves with replays. The exhaustive
//! native-vs-reference comparison lives in the Python tests (hypothesis).

use super::curve::{curve, lru_hits};
use super::keys::{dense_ids, next_use};
use super::*;
use std::sync::atomic::AtomicBool;

const BELADY: [u64; 12] = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];

fn prepare(keys: &[u64]) -> (Vec<u32>, usize, Vec<u64>) {
    let mut ids = vec![0; keys.len()];
    let n = dense_ids(keys, &mut ids).unwrap();
    let mut next = vec![0; keys.len()];
    next_use(&ids, n, &mut next).unwrap();
    (ids, n, next)
}

fn misses(policy: &str, keys: &[u64], capacity: u64) -> u64 {
    let (ids, n, next) = prepare(keys);
    keys.len() as u64 - replay(policy, capacity, &ids, n, &next, Options::default()).unwrap()
}

/// A small deterministic generator, so the tests need no crates.
fn lcg_trace(len: usize, n_keys: u64, seed: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // skew towards small keys: square a uniform number
            let u = (x >> 33) % n_keys;
            ((u * u) / n_keys.max(1)) ^ 0xdead_beef_0000
        })
        .collect()
}

#[test]
fn belady_anomaly_golden() {
    assert_eq!((misses("fifo", &BELADY, 3), misses("fifo", &BELADY, 4)), (9, 10));
    assert_eq!((misses("lru", &BELADY, 3), misses("lru", &BELADY, 4)), (10, 8));
    assert_eq!((misses("opt", &BELADY, 3), misses("opt", &BELADY, 4)), (7, 6));
}

#[test]
fn dense_ids_follow_first_appearance() {
    let keys = [u64::MAX, 5, u64::MAX, 0, 5, 1 << 63];
    let mut ids = vec![0; keys.len()];
    assert_eq!(dense_ids(&keys, &mut ids).unwrap(), 4);
    assert_eq!(ids, vec![0, 1, 0, 2, 1, 3]);
}

#[test]
fn dense_ids_survive_growth() {
    let keys: Vec<u64> = (0..100_000u64)
        .map(|k| k.wrapping_mul(0x1234_5678_9abc_def1))
        .chain((0..10u64).map(|k| k.wrapping_mul(0x1234_5678_9abc_def1)))
        .collect();
    let mut ids = vec![0; keys.len()];
    assert_eq!(dense_ids(&keys, &mut ids).unwrap(), 100_000);
    assert_eq!(ids[100_000 + 3], 3);
}

#[test]
fn curves_equal_replays() {
    let cancel = AtomicBool::new(false);
    for seed in 0..4 {
        // long enough that the LRU window compacts several times
        let keys = lcg_trace(20_000, 300, seed);
        let (ids, n, next) = prepare(&keys);
        let caps: Vec<u64> = vec![1, 2, 3, 7, 16, 50, 100, 299, 300, 1000];
        for policy in POLICIES {
            let caps: Vec<u64> = caps.iter().copied().filter(|&c| c >= min_capacity(policy)).collect();
            let got = curve(policy, &ids, n, &next, &caps, Options::default(), 2, &cancel).unwrap();
            let want: Vec<u64> =
                caps.iter().map(|&c| replay(policy, c, &ids, n, &next, Options::default()).unwrap()).collect();
            assert_eq!(got, want, "{policy} seed {seed}");
        }
    }
}

#[test]
fn stack_policies_never_lose_hits_with_more_room() {
    let keys = lcg_trace(5_000, 200, 9);
    let (ids, n, _) = prepare(&keys);
    let caps: Vec<u64> = (1..=200).collect();
    let hits = lru_hits(&ids, n, &caps, &AtomicBool::new(false)).unwrap();
    assert!(hits.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    assert!(AnyPolicy::new("lru", 0, 10, Options::default()).is_err());
    let err = AnyPolicy::new("nope", 3, 10, Options::default()).err().unwrap().to_string();
    assert!(err.contains("fifo, lru, lfu, clock, arc, opt"), "{err}");
    let mut opt = AnyPolicy::new("opt", 3, 10, Options::default()).unwrap();
    assert!(opt.replay_chunk(&[1, 2], &[5], &mut []).is_err());
    let cancel = AtomicBool::new(false);
    assert!(curve("lru", &[0, 1], 2, &[], &[0], Options::default(), 1, &cancel).is_err());
    assert!(lru_hits(&[0, 7], 2, &[1], &cancel).is_err());
}

#[test]
fn cancel_stops_a_long_run() {
    let keys = lcg_trace(300_000, 1000, 1);
    let (ids, n, _) = prepare(&keys);
    let cancel = AtomicBool::new(true);
    let mut p = AnyPolicy::new("lru", 10, n, Options::default()).unwrap();
    assert_eq!(
        curve::replay_cancellable(&mut p, &ids, &[], &[], &[], &mut [], &cancel),
        Err(crate::Error::Interrupted)
    );
}

#[test]
fn online_ids_grow_arrays() {
    for policy in ["fifo", "lru", "lfu", "clock", "arc", "sieve", "s3fifo", "twoq", "gdsf"] {
        let mut p = AnyPolicy::new(policy, min_capacity(policy).max(2) * 2, 0, Options::default()).unwrap();
        assert!(!p.access(1000, NEVER));
        assert!(p.access(1000, NEVER));
        assert!(p.contains(1000));
        assert_eq!(p.len(), 1);
    }
}

fn hits(policy: &str, capacity: u64, keys: &[u32]) -> Vec<bool> {
    let n = keys.iter().map(|&k| k as usize + 1).max().unwrap_or(0);
    let mut p = AnyPolicy::new(policy, capacity, n, Options::default()).unwrap();
    keys.iter().map(|&k| p.access(k, NEVER)).collect()
}

#[test]
fn new_policies_golden_hits_from_libcachesim() {
    // Each row was checked against the libcachesim package request by request.
    let (t, f) = (true, false);
    assert_eq!(hits("sieve", 3, &[1, 2, 3, 1, 4, 5, 1, 2]), [f, f, f, t, f, f, t, f]);
    // GDSF inserts, then evicts the lowest priority: 2 (1e6) leaves at once, A (2e6) stays;
    // the second 2 ties with 1 at 2e6 and 1, accessed earlier, goes.
    assert_eq!(hits("gdsf", 1, &[1, 1, 2, 2, 1]), [f, t, f, f, f]);
    // With 10..19 objects, S3-FIFO's small queue holds one object, which libCacheSim never
    // inserts: nothing is ever cached.
    let mut keys: Vec<u32> = [1, 2, 3].repeat(3);
    keys.extend(10..40);
    keys.extend([1, 2, 3]);
    assert!(hits("s3fifo", 15, &keys).iter().all(|&h| !h));
    let got = hits("s3fifo", 25, &keys);
    assert_eq!(got.iter().filter(|&&h| h).count(), 9);
    assert!(got[3..9].iter().all(|&h| h) && got[39..].iter().all(|&h| h));
    assert_eq!(hits("twoq", 4, &[1, 2, 3].repeat(3)), [[f; 3], [t; 3], [t; 3]].concat());
}

#[test]
fn small_capacities_are_refused_where_a_queue_would_be_empty() {
    for (policy, min) in [("s3fifo", 10), ("twoq", 4)] {
        assert_eq!(min_capacity(policy), min);
        let err = AnyPolicy::new(policy, min - 1, 10, Options::default()).err().unwrap().to_string();
        assert!(err.contains("capacity"), "{err}");
        assert!(AnyPolicy::new(policy, min, 10, Options::default()).is_ok());
    }
}

#[test]
fn gdsf_heap_stays_small_under_many_hits() {
    let mut p = AnyPolicy::new("gdsf", 4, 8, Options::default()).unwrap();
    for i in 0..100_000u32 {
        p.access(i % 3, NEVER);
    }
    match &p {
        AnyPolicy::Gdsf(g) => assert!(g.heap_len() < 2 * 4 + 1100),
        _ => unreachable!(),
    }
}

#[test]
fn streaming_in_chunks_equals_one_replay() {
    let cancel = AtomicBool::new(false);
    let keys = lcg_trace(30_000, 500, 5);
    let (ids, n, next) = prepare(&keys);
    let next_access: Vec<i64> = next.iter().map(|&t| if t == NEVER { -1 } else { t as i64 }).collect();
    for policy in POLICIES {
        let cap = 50.max(min_capacity(policy));
        let want = replay(policy, cap, &ids, n, &next, Options::default()).unwrap();
        for chunk in [1usize, 7, 4096, 30_000] {
            let mut s = stream::Stream::new(policy, cap, Options::default()).unwrap();
            let mut hits = 0;
            for (k, t) in keys.chunks(chunk).zip(next_access.chunks(chunk)) {
                hits += s.feed(k, t, &[], &cancel).unwrap();
            }
            assert_eq!((hits, s.hits(), s.accesses()), (want, want, keys.len() as u64), "{policy} chunk {chunk}");
            assert_eq!(s.n_distinct(), n);
        }
    }
    let mut opt = stream::Stream::new("opt", 5, Options::default()).unwrap();
    assert!(opt.feed(&keys[..3], &[], &[], &cancel).is_err());
}

#[test]
fn bounded_lru_stack_equals_the_exact_curve_up_to_its_depth() {
    let never = AtomicBool::new(false);
    for (len, n_keys, depth) in [(5_000, 300, 1), (20_000, 2_000, 37), (30_000, 500, 600), (3, 3, 10)] {
        let keys = lcg_trace(len, n_keys, depth as u64);
        let (ids, n, _) = prepare(&keys);
        let capacities: Vec<u64> = (1..=depth as u64).collect();
        let exact = lru_hits(&ids, n, &capacities, &never).unwrap();
        let sampled = shards::lru_shards(&keys, 1.0, 0, depth, &never).unwrap();
        // Many renumberings happen over these lengths (the window is 8 x depth + 512).
        assert_eq!(sampled.exact_hits, exact, "depth {depth}");
        assert_eq!(sampled.kept, keys, "rate 1 keeps every access");
    }
}

#[test]
fn spatial_sample_keeps_whole_keys_and_checks_the_rate() {
    let keys = lcg_trace(10_000, 1_000, 5);
    let mut mask = vec![false; keys.len()];
    shards::spatial_mask(&keys, 0.1, 7, &mut mask).unwrap();
    let never = AtomicBool::new(false);
    let kept = shards::lru_shards(&keys, 0.1, 7, 0, &never).unwrap().kept;
    let by_mask: Vec<u64> = keys.iter().zip(&mask).filter(|(_, &m)| m).map(|(&k, _)| k).collect();
    assert_eq!(kept, by_mask);
    for (i, &k) in keys.iter().enumerate() {
        let first = keys.iter().position(|&x| x == k).unwrap();
        assert_eq!(mask[i], mask[first], "a key is in the sample in all its accesses or none");
    }
    for bad in [0.0, -0.5, 1.5, f64::NAN] {
        assert!(shards::threshold(bad).is_err());
    }
}
/// Hit flags of a GDSF replay with one cost (and optionally one size) per access.
fn gdsf_costed(capacity: u64, keys: &[u32], sizes: &[u64], costs: &[f64]) -> Result<Vec<bool>> {
    let mut p = AnyPolicy::new("gdsf", capacity, 8, Options::default())?;
    let mut mask = vec![false; keys.len()];
    curve::replay_cancellable(&mut p, keys, sizes, costs, &[], &mut mask, &AtomicBool::new(false))?;
    Ok(mask)
}

#[test]
fn gdsf_keeps_the_expensive_object() {
    let (t, f) = (true, false);
    // Two slots; A costs 10, B 1, C 5. C's arrival evicts B, the cheapest (L = 1); A then
    // hits; B comes back at 1 + 1 = 2, the lowest, and leaves at once; C hits.
    let keys = [0, 1, 2, 0, 1, 2];
    let costs = [10.0, 1.0, 5.0, 10.0, 1.0, 5.0];
    assert_eq!(gdsf_costed(2, &keys, &[], &costs).unwrap(), [f, f, f, t, f, t]);
    // Without costs every priority ties at first and the least recent goes: no hit at all.
    assert_eq!(hits("gdsf", 2, &keys), [f; 6]);
    // The same in bytes: equal sizes of 100 bytes in a 200-byte cache.
    assert_eq!(gdsf_costed(200, &keys, &[100; 6], &costs).unwrap(), [f, f, f, t, f, t]);
    // The cost an object entered with stays: B's later cost of 1e9 is not looked at on a hit.
    let mut p = AnyPolicy::new("gdsf", 2, 4, Options::default()).unwrap();
    let got: Vec<bool> = [(0, 10.0), (1, 1.0), (1, 1e9), (2, 5.0), (1, 1e9)]
        .iter()
        .map(|&(k, c)| p.access_costed(k, None, c).unwrap())
        .collect();
    // B (count 2, cost 1: priority 2) is evicted when C (5) enters; it comes back as a miss.
    assert_eq!(got, [f, f, t, f, f]);
}

#[test]
fn gdsf_costs_at_the_scale_change_nothing() {
    let keys = lcg_trace(20_000, 300, 9);
    let (ids, n, _) = prepare(&keys);
    let sizes: Vec<u64> = keys.iter().map(|k| k % 7 + 1).collect();
    let scale = vec![GDSF_SCALE; ids.len()];
    let cancel = AtomicBool::new(false);
    for (sized, capacity) in [(false, 50u64), (true, 200)] {
        let s = if sized { &sizes[..] } else { &[][..] };
        let mut plain = AnyPolicy::new("gdsf", capacity, n, Options::default()).unwrap();
        let mut costed = AnyPolicy::new("gdsf", capacity, n, Options::default()).unwrap();
        let (mut a, mut b) = (vec![false; ids.len()], vec![false; ids.len()]);
        curve::replay_cancellable(&mut plain, &ids, s, &[], &[], &mut a, &cancel).unwrap();
        curve::replay_cancellable(&mut costed, &ids, s, &scale, &[], &mut b, &cancel).unwrap();
        assert_eq!(a, b);
        assert!(a.iter().any(|&h| h) && !a.iter().all(|&h| h));
    }
}

#[test]
fn bad_costs_are_errors() {
    let keys = [0, 1, 0];
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = gdsf_costed(2, &keys, &[], &[1.0, bad, 1.0]).unwrap_err().to_string();
        assert!(err.starts_with("costs="), "{err}");
    }
    assert!(gdsf_costed(2, &keys, &[], &[1.0]).is_err());
    let mut lru = AnyPolicy::new("lru", 2, 2, Options::default()).unwrap();
    let err = lru.replay_chunk_costed(&keys, &[], &[1.0; 3], &mut []).unwrap_err().to_string();
    assert!(err.contains("gdsf"), "{err}");
    assert!(lru.access_costed(0, None, 1.0).is_err());
}
