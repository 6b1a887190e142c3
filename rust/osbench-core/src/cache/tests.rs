//! Core tests: golden facts, the agreement of curves with replays, and the policy table held to
//! the code (every row builds, refuses what it says it refuses, and has its file). The
//! exhaustive native-vs-reference comparison lives in the Python tests (hypothesis).

use super::curve::lru_hits;
use super::keys::{dense_ids, id_keys, next_use};
use super::online::Online;
use super::*;
use crate::cancel::Cancel;
use crate::Result;

const BELADY: [u64; 12] = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];
/// A cancel flag never raised.
static NO: Cancel = Cancel::new();

fn prepare(keys: &[u64]) -> (Vec<u32>, usize, Vec<u64>) {
    let mut ids = vec![0; keys.len()];
    let n = dense_ids(keys, &mut ids, &NO).unwrap();
    let mut next = vec![0; keys.len()];
    next_use(&ids, n, &mut next, &NO).unwrap();
    (ids, n, next)
}

/// The accesses with their next uses (what every policy, offline ones included, can replay).
fn view<'a>(ids: &'a [u32], n: usize, next: &'a [u64]) -> Accesses<'a> {
    Accesses::new(ids, n).unwrap().with_next_use(next).unwrap()
}

fn replay_hits(policy: &str, capacity: u64, a: &Accesses<'_>) -> u64 {
    replay(policy, capacity, a, Options::default(), &mut [], &NO).unwrap()
}

fn misses(policy: &str, keys: &[u64], capacity: u64) -> u64 {
    let (ids, n, next) = prepare(keys);
    keys.len() as u64 - replay_hits(policy, capacity, &view(&ids, n, &next))
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

fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|p| p.name)
}

// ------------------------------------------------------------------ the table

#[test]
fn every_row_has_its_file_and_every_file_its_row() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cache/policies");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".rs").map(str::to_string))
        .filter(|f| f != "mod")
        .collect();
    files.sort();
    // A file is named as its policy, each `-` of the name written `_`.
    let mut rows: Vec<String> = names().map(|n| n.replace('-', "_")).collect();
    rows.sort();
    assert_eq!(files, rows);
    let mut unique = rows.clone();
    unique.dedup();
    assert_eq!(unique, rows, "a name appears twice in the table");
}

#[test]
fn every_row_builds_from_its_minimum_capacity_and_refuses_below() {
    for p in TABLE {
        assert!(p.min_capacity() >= 1, "{}", p.name);
        let built = AnyPolicy::new(p.name, p.min_capacity(), 10, Options::default()).unwrap();
        assert_eq!((built.name(), built.info().name), (p.name, p.name));
        assert!(built.is_empty() && built.used() == 0);
        for below in [0, p.min_capacity() - 1] {
            let err = AnyPolicy::new(p.name, below, 10, Options::default()).err().unwrap().to_string();
            assert!(err.starts_with(&format!("capacity={below} is not accepted")), "{err}");
        }
    }
}

/// The options setting CLOCK's textbook variant.
fn textbook() -> Options {
    Options::new().with("bit_on_insert", Value::Flag(true)).unwrap()
}

#[test]
fn parameters_are_taken_by_the_policies_that_read_them_only() {
    for p in TABLE {
        assert!(p.params.len() <= MAX_OPTIONS, "{}", p.name);
        for param in p.params {
            // Declared once per row, accepted at its default, found by name.
            assert_eq!(p.params.iter().filter(|q| q.name == param.name).count(), 1, "{}", p.name);
            assert_eq!(param.accepts.check(param.default), Some(param.default), "{} {}", p.name, param.name);
            assert!(parameter(param.name).is_ok());
            let given = Options::new().with(param.name, param.default).unwrap();
            for other in TABLE {
                let r = AnyPolicy::new(other.name, other.min_capacity(), 10, given);
                assert_eq!(r.is_ok(), other.reads().any(|r| r == param.name), "{} {}", other.name, param.name);
                if let Err(e) = r {
                    let said = format!("{}={} is not accepted: {} is read by ", param.name, param.default, param.name);
                    assert!(e.to_string().starts_with(&said), "{e}");
                }
            }
        }
    }
    let err = parameter("nope").unwrap_err().to_string();
    assert!(err.starts_with("parameter=\"nope\" is not accepted: one of the policies' parameters: "), "{err}");
    // A value of the wrong kind is refused, naming what is accepted.
    let wrong = Options::new().with("bit_on_insert", Value::Int(1)).unwrap();
    let err = AnyPolicy::new("clock", 2, 10, wrong).err().unwrap().to_string();
    assert_eq!(err, "bit_on_insert=1 is not accepted: True or False for clock");
    // CLOCK reads it: with every bit set on insert the sweep clears them all and evicts the
    // oldest (1), which the default keeps (its bit alone was set, by the hit).
    let keys = [1, 2, 1, 3, 1];
    let (ids, n, next) = prepare(&keys);
    let a = view(&ids, n, &next);
    let textbook = replay("clock", 2, &a, textbook(), &mut [], &NO).unwrap();
    assert_eq!((replay_hits("clock", 2, &a), textbook), (2, 1));
}

#[test]
fn offline_rows_need_next_uses_and_the_others_ignore_them() {
    let keys = lcg_trace(3_000, 100, 2);
    let (ids, n, next) = prepare(&keys);
    let bare = Accesses::new(&ids, n).unwrap();
    for p in TABLE {
        let cap = p.min_capacity().max(20);
        let without = replay(p.name, cap, &bare, Options::default(), &mut [], &NO);
        assert_eq!(without.is_err(), p.offline, "{}", p.name);
        if let Ok(hits) = without {
            assert_eq!(hits, replay_hits(p.name, cap, &view(&ids, n, &next)), "{}", p.name);
        }
    }
}

#[test]
fn costs_go_to_the_rows_that_take_them_only() {
    let keys = lcg_trace(3_000, 100, 3);
    let (ids, n, next) = prepare(&keys);
    let costs = vec![GDSF_SCALE; ids.len()];
    let a = view(&ids, n, &next).with_costs(&costs).unwrap();
    for p in TABLE {
        let cap = p.min_capacity().max(20);
        let r = replay(p.name, cap, &a, Options::default(), &mut [], &NO);
        assert_eq!(r.is_ok(), p.takes_costs, "{}", p.name);
        match r {
            Ok(hits) => assert_eq!(hits, replay_hits(p.name, cap, &view(&ids, n, &next)), "{}", p.name),
            Err(e) => assert_eq!(e.to_string(), "costs=given is not accepted: costs are taken by gdsf only"),
        }
    }
}

#[test]
fn unit_sizes_give_the_unit_hits_for_every_row() {
    let keys = lcg_trace(20_000, 400, 4);
    let (ids, n, next) = prepare(&keys);
    let ones = vec![1u64; ids.len()];
    for p in TABLE {
        for cap in [p.min_capacity(), 37.max(p.min_capacity()), 150] {
            let (mut unit, mut sized) = (vec![false; ids.len()], vec![false; ids.len()]);
            let a = view(&ids, n, &next);
            let o = Options::default();
            replay(p.name, cap, &a, o, &mut unit, &NO).unwrap();
            replay(p.name, cap, &a.with_sizes(&ones).unwrap(), o, &mut sized, &NO).unwrap();
            assert_eq!(unit, sized, "{} {cap}", p.name);
        }
    }
}

#[test]
fn online_rows_grow_their_arrays_and_count_what_they_hold() {
    for p in TABLE.iter().filter(|p| !p.offline) {
        let mut c = Online::new(p.name, p.min_capacity().max(2) * 2, Options::default(), false, false).unwrap();
        assert!(!c.access(1000, None, None).unwrap());
        assert!(c.access(1000, None, None).unwrap());
        assert!(c.contains(1000) && !c.contains(999));
        assert_eq!((c.len(), c.used()), (1, 1));
        // LIRS admits only what fits its HIR set (1% of the capacity), W-TinyLFU what fits its
        // window (1%), as libCacheSim's do.
        let size = if matches!(p.name, "lirs" | "wtinylfu") { 10 } else { 70 };
        let mut sized = Online::new(p.name, 1000, Options::default(), true, false).unwrap();
        assert!(!sized.access(-5, Some(size), None).unwrap());
        assert_eq!((sized.len(), sized.used()), (1, size), "{}", p.name);
    }
    for p in TABLE.iter().filter(|p| p.offline) {
        let err = Online::new(p.name, 5, Options::default(), false, false).err().unwrap().to_string();
        assert!(err.contains("no online form"), "{err}");
    }
}

// ------------------------------------------------------------------ golden facts and curves

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
    assert_eq!(dense_ids(&keys, &mut ids, &NO).unwrap(), 4);
    assert_eq!(ids, vec![0, 1, 0, 2, 1, 3]);
}

#[test]
fn dense_ids_survive_growth() {
    let keys: Vec<u64> = (0..100_000u64)
        .map(|k| k.wrapping_mul(0x1234_5678_9abc_def1))
        .chain((0..10u64).map(|k| k.wrapping_mul(0x1234_5678_9abc_def1)))
        .collect();
    let mut ids = vec![0; keys.len()];
    assert_eq!(dense_ids(&keys, &mut ids, &NO).unwrap(), 100_000);
    assert_eq!(ids[100_000 + 3], 3);
}

#[test]
fn curves_equal_replays() {
    for seed in 0..4 {
        // long enough that the LRU window compacts several times
        let keys = lcg_trace(20_000, 300, seed);
        let (ids, n, next) = prepare(&keys);
        let a = view(&ids, n, &next);
        let caps: Vec<u64> = vec![1, 2, 3, 7, 16, 50, 100, 299, 300, 1000];
        for p in TABLE {
            let caps: Vec<u64> = caps.iter().copied().filter(|&c| c >= p.min_capacity()).collect();
            let got = curve(p.name, &a, &caps, Options::default(), 2, &NO).unwrap();
            let want: Vec<u64> = caps.iter().map(|&c| replay_hits(p.name, c, &a)).collect();
            assert_eq!(got, want, "{} seed {seed}", p.name);
        }
    }
}

#[test]
fn a_grid_of_cells_on_any_number_of_threads_equals_its_replays_one_by_one() {
    let keys = lcg_trace(20_000, 300, 5);
    let (ids, n, next) = prepare(&keys);
    let a = view(&ids, n, &next);
    let cells: Vec<(&str, u64)> =
        names().flat_map(|p| [3u64, 20, 100, 299].map(|c| (p, c.max(info(p).unwrap().min_capacity())))).collect();
    let want: Vec<u64> = cells.iter().map(|&(p, c)| replay_hits(p, c, &a)).collect();
    for threads in [1, 2, 3, 8, 1000] {
        assert_eq!(replay_grid(&cells, &a, Options::default(), threads, &NO).unwrap(), want, "threads={threads}");
    }
    assert_eq!(replay_grid(&[], &a, Options::default(), 2, &NO).unwrap(), Vec::<u64>::new());
    // A bad cell anywhere is refused before any runs, by the same checks as one replay.
    let bad = replay_grid(&[("lru", 5), ("nope", 5)], &a, Options::default(), 2, &NO).unwrap_err().to_string();
    assert!(bad.contains("nope"), "{bad}");
    assert!(replay_grid(&[("lru", 0)], &a, Options::default(), 2, &NO).is_err());
    let bare = Accesses::new(&ids, n).unwrap();
    assert!(replay_grid(&[("lru", 5), ("opt", 5)], &bare, Options::default(), 2, &NO).is_err());
    let raised = Cancel::raised();
    assert_eq!(
        replay_grid(&[("lru", 5), ("arc", 5)], &a, Options::default(), 2, &raised),
        Err(crate::Error::Interrupted)
    );
}

#[test]
fn stack_policies_never_lose_hits_with_more_room() {
    let keys = lcg_trace(5_000, 200, 9);
    let (ids, n, _) = prepare(&keys);
    let caps: Vec<u64> = (1..=200).collect();
    let hits = lru_hits(&Accesses::new(&ids, n).unwrap(), &caps, &NO).unwrap();
    assert!(hits.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    assert!(AnyPolicy::new("lru", 0, 10, Options::default()).is_err());
    let err = AnyPolicy::new("nope", 3, 10, Options::default()).err().unwrap().to_string();
    assert!(err.contains("fifo, lru, lfu, clock, arc, opt"), "{err}");
    assert!(Accesses::new(&[1, 2], 3).unwrap().with_next_use(&[5]).is_err());
    let ids = [0, 1];
    let a = Accesses::new(&ids, 2).unwrap();
    assert!(curve("lru", &a, &[0], Options::default(), 1, &NO).is_err());
    assert!(Accesses::new(&[0, 7], 2).is_err());
    assert!(a.with_sizes(&[1, 0]).is_err() && a.with_sizes(&[1]).is_err());
    assert!(replay("lru", 2, &a, Options::default(), &mut [false; 3], &NO).is_err());
}

#[test]
fn cancel_stops_a_long_run() {
    let keys = lcg_trace(300_000, 1000, 1);
    let (ids, n, _) = prepare(&keys);
    let cancel = Cancel::raised();
    let a = Accesses::new(&ids, n).unwrap();
    assert_eq!(replay("lru", 10, &a, Options::default(), &mut [], &cancel), Err(crate::Error::Interrupted));
    assert_eq!(curve("lru", &a, &[10], Options::default(), 1, &cancel), Err(crate::Error::Interrupted));
    assert_eq!(curve("sieve", &a, &[10, 20], Options::default(), 2, &cancel), Err(crate::Error::Interrupted));
    let mut next = vec![0; ids.len()];
    next_use(&ids, n, &mut next, &NO).unwrap();
    let a = a.with_next_use(&next).unwrap();
    assert_eq!(curve("opt", &a, &[10, 20], Options::default(), 1, &cancel), Err(crate::Error::Interrupted));
    assert_eq!(shards::lru_shards(&keys, 0.5, 0, 10, &cancel).err(), Some(crate::Error::Interrupted));
    let mut s = stream::Stream::new("lru", 10, Options::default()).unwrap();
    assert_eq!(s.feed(&keys, None, None, &cancel), Err(crate::Error::Interrupted));
}

/// Hit flags of an online replay (unit sizes, no costs).
fn hits(policy: &str, capacity: u64, keys: &[u32]) -> Vec<bool> {
    let mut c = Online::new(policy, capacity, Options::default(), false, false).unwrap();
    keys.iter().map(|&k| c.access(k.into(), None, None).unwrap()).collect()
}

#[test]
fn small_capacities_are_refused_where_a_queue_would_be_empty() {
    for (policy, min) in [("s3fifo", 10), ("twoq", 4)] {
        assert_eq!(info(policy).unwrap().min_capacity(), min);
        let err = AnyPolicy::new(policy, min - 1, 10, Options::default()).err().unwrap().to_string();
        assert!(err.contains("capacity"), "{err}");
        assert!(AnyPolicy::new(policy, min, 10, Options::default()).is_ok());
    }
}

#[test]
fn streaming_in_chunks_equals_one_replay() {
    let keys = lcg_trace(30_000, 500, 5);
    let (ids, n, next) = prepare(&keys);
    let next_access: Vec<i64> = next.iter().map(|&t| if t == NEVER { -1 } else { t as i64 }).collect();
    let by_id = id_keys(&keys, &ids, n);
    for p in TABLE {
        let cap = 50.max(p.min_capacity());
        let want = replay_hits(p.name, cap, &view(&ids, n, &next).with_keys(&by_id).unwrap());
        for chunk in [1usize, 7, 4096, 30_000] {
            let mut s = stream::Stream::new(p.name, cap, Options::default()).unwrap();
            let mut hits = 0;
            for (k, t) in keys.chunks(chunk).zip(next_access.chunks(chunk)) {
                hits += s.feed(k, Some(t), None, &NO).unwrap();
            }
            assert_eq!((hits, s.hits(), s.accesses()), (want, want, keys.len() as u64), "{} chunk {chunk}", p.name);
            assert_eq!(s.n_distinct(), n);
        }
    }
    let mut opt = stream::Stream::new("opt", 5, Options::default()).unwrap();
    assert!(opt.feed(&keys[..3], None, None, &NO).is_err());
}

#[test]
fn bounded_lru_stack_equals_the_exact_curve_up_to_its_depth() {
    for (len, n_keys, depth) in [(5_000, 300, 1), (20_000, 2_000, 37), (30_000, 500, 600), (3, 3, 10)] {
        let keys = lcg_trace(len, n_keys, depth as u64);
        let (ids, n, _) = prepare(&keys);
        let capacities: Vec<u64> = (1..=depth as u64).collect();
        let exact = lru_hits(&Accesses::new(&ids, n).unwrap(), &capacities, &NO).unwrap();
        let sampled = shards::lru_shards(&keys, 1.0, 0, depth, &NO).unwrap();
        // Many renumberings happen over these lengths (the window is 8 x depth + 512).
        assert_eq!(sampled.exact_hits, exact, "depth {depth}");
        assert_eq!(sampled.kept, keys, "rate 1 keeps every access");
    }
}

#[test]
fn spatial_sample_keeps_whole_keys_and_checks_the_rate() {
    let keys = lcg_trace(10_000, 1_000, 5);
    let mut mask = vec![false; keys.len()];
    shards::spatial_mask(&keys, 0.1, 7, &mut mask, &NO).unwrap();
    let kept = shards::lru_shards(&keys, 0.1, 7, 0, &NO).unwrap().kept;
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

// ------------------------------------------------------------------ costs (GDSF)

/// Hit flags of a GDSF replay with one cost (and optionally one size) per access.
fn gdsf_costed(capacity: u64, keys: &[u32], sizes: &[u64], costs: &[f64]) -> Result<Vec<bool>> {
    let mut a = Accesses::new(keys, 8)?.with_costs(costs)?;
    if !sizes.is_empty() {
        a = a.with_sizes(sizes)?;
    }
    let mut mask = vec![false; keys.len()];
    replay("gdsf", capacity, &a, Options::default(), &mut mask, &NO)?;
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
    let mut c = Online::new("gdsf", 2, Options::default(), false, true).unwrap();
    let got: Vec<bool> = [(0, 10.0), (1, 1.0), (1, 1e9), (2, 5.0), (1, 1e9)]
        .iter()
        .map(|&(k, cost)| c.access(k, None, Some(cost)).unwrap())
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
    for (sized, capacity) in [(false, 50u64), (true, 200)] {
        let mut plain = Accesses::new(&ids, n).unwrap();
        if sized {
            plain = plain.with_sizes(&sizes).unwrap();
        }
        let costed = plain.with_costs(&scale).unwrap();
        let (mut a, mut b) = (vec![false; ids.len()], vec![false; ids.len()]);
        replay("gdsf", capacity, &plain, Options::default(), &mut a, &NO).unwrap();
        replay("gdsf", capacity, &costed, Options::default(), &mut b, &NO).unwrap();
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
    let a = Accesses::new(&keys, 2).unwrap().with_costs(&[1.0; 3]).unwrap();
    let err = replay("lru", 2, &a, Options::default(), &mut [], &NO).unwrap_err().to_string();
    assert!(err.contains("gdsf"), "{err}");
    assert!(Online::new("lru", 2, Options::default(), false, true).is_err());
}

#[test]
fn online_access_refuses_what_its_mode_does_not_take() {
    let mut plain = Online::new("lru", 4, Options::default(), false, false).unwrap();
    assert!(plain.access(1, Some(3), None).is_err() && plain.access(1, None, Some(2.0)).is_err());
    assert!(plain.access(1 << 64, None, None).unwrap_err().to_string().contains("outside"));
    let mut both = Online::new("gdsf", 100, Options::default(), true, true).unwrap();
    for (size, cost) in [(None, Some(1.0)), (Some(5), None), (Some(0), Some(1.0)), (Some(5), Some(f64::NAN))] {
        assert!(both.access(1, size, cost).is_err());
    }
    assert!(both.is_empty() && !both.contains(1), "a refused access changes nothing");
    assert!(!both.access(-1, Some(5), Some(2.0)).unwrap() && both.contains(-1) && !both.contains(u64::MAX as i128));
}

#[test]
fn an_evicted_object_is_no_longer_contained() {
    for p in TABLE.iter().filter(|p| !p.offline) {
        // (S3-FIFO from 20: at 10 to 19 its small queue holds one object and caches nothing.)
        let capacity = (p.min_capacity() * 2).max(2);
        let mut c = Online::new(p.name, capacity, Options::default(), false, false).unwrap();
        assert!(c.is_empty());
        // Many more keys than room: most of them were cached once and are gone now.
        let keys: Vec<i128> = (0..(capacity as i128) * 20).collect();
        for &k in &keys {
            c.access(k, None, None).unwrap();
        }
        let held = keys.iter().filter(|&&k| c.contains(k)).count();
        assert!(!c.is_empty() && held == c.len() && held as u64 <= capacity, "{}: {held} held", p.name);
        assert!(!c.contains(keys.len() as i128), "{}: a key never seen", p.name);
    }
}

#[test]
fn accesses_and_key_maps_say_when_they_are_empty() {
    assert!(Accesses::new(&[], 0).unwrap().is_empty());
    assert!(!Accesses::new(&[0], 1).unwrap().is_empty());
    let mut map = keys::KeyMap::<u64>::with_capacity(4);
    assert!(map.is_empty() && map.get(7).is_none());
    assert_eq!((map.id_of(7).unwrap(), map.id_of(9).unwrap(), map.id_of(7).unwrap()), (0, 1, 0));
    assert!(!map.is_empty() && map.len() == 2 && map.get(9) == Some(1));
}

#[test]
fn opt_stack_curves_below_the_number_of_keys_equal_replays() {
    // The stack is cut at the largest capacity asked for, far below the 300 keys.
    for seed in 0..3 {
        let keys = lcg_trace(6_000, 300, seed);
        let (ids, n, next) = prepare(&keys);
        let a = view(&ids, n, &next);
        let caps: Vec<u64> = (1..=24).collect();
        let want: Vec<u64> = caps.iter().map(|&c| replay_hits("opt", c, &a)).collect();
        assert_eq!(curve("opt", &a, &caps, Options::default(), 1, &NO).unwrap(), want, "seed {seed}");
        assert_eq!(
            curve("lru", &a, &caps, Options::default(), 1, &NO).unwrap()[..3],
            lru_hits(&a, &[1, 2, 3], &NO).unwrap()
        );
    }
}

#[test]
fn curves_with_sizes_or_costs_replay_every_capacity() {
    // With sizes (or costs) no stack distance holds: every row, LRU and OPT included, equals
    // its replays at each capacity.
    let keys = lcg_trace(8_000, 200, 11);
    let (ids, n, next) = prepare(&keys);
    let sizes: Vec<u64> = keys.iter().map(|k| k % 9 + 1).collect();
    let costs: Vec<f64> = keys.iter().map(|k| (k % 5 + 1) as f64 * 1e5).collect();
    let sized = view(&ids, n, &next).with_sizes(&sizes).unwrap();
    let costed = view(&ids, n, &next).with_costs(&costs).unwrap();
    let caps = [10, 40, 150];
    for p in TABLE {
        let caps: Vec<u64> = caps.iter().map(|&c| c.max(p.min_capacity())).collect();
        let want: Vec<u64> =
            caps.iter().map(|&c| replay(p.name, c, &sized, Options::default(), &mut [], &NO).unwrap()).collect();
        assert_eq!(curve(p.name, &sized, &caps, Options::default(), 2, &NO).unwrap(), want, "{}", p.name);
    }
    let want: Vec<u64> =
        caps.iter().map(|&c| replay("gdsf", c, &costed, Options::default(), &mut [], &NO).unwrap()).collect();
    assert_eq!(curve("gdsf", &costed, &caps, Options::default(), 2, &NO).unwrap(), want);
    // Sizes change LRU's and OPT's hits: a stack over unit objects would give other numbers.
    let unit = view(&ids, n, &next);
    for p in ["lru", "opt"] {
        assert_ne!(
            curve(p, &sized, &caps, Options::default(), 1, &NO).unwrap(),
            curve(p, &unit, &caps, Options::default(), 1, &NO).unwrap()
        );
    }
}

#[test]
fn a_raised_flag_is_seen_at_the_first_access() {
    // One access: the stack curves look at the flag before it, not only between chunks.
    let cancel = Cancel::raised();
    let (ids, n, next) = prepare(&[5]);
    let a = view(&ids, n, &next);
    for p in ["lru", "opt"] {
        assert_eq!(curve(p, &a, &[1], Options::default(), 1, &cancel), Err(crate::Error::Interrupted), "{p}");
    }
}

#[test]
fn the_number_of_distinct_ids_is_bounded_where_ids_end() {
    // Ids are u32 and u32::MAX marks an empty slot: one more id than keys::MAX_IDS is refused.
    assert_eq!(keys::MAX_IDS, u32::MAX as usize - 1);
    assert!(Accesses::new(&[], keys::MAX_IDS).is_ok());
    assert!(Accesses::new(&[], keys::MAX_IDS + 1).is_err());
}

#[test]
fn loops_over_whole_words_of_marks_give_the_closed_form() {
    // A loop over k keys, r times: LRU hits every access after the first round at capacity
    // k or more, and none below. With k a multiple of 64, the stacks' renumbering ends on a
    // whole word of marks (curve: window 2k + 512; SHARDS' bounded stack at depth k).
    for k in [64u64, 128, 192] {
        let rounds = 40;
        let keys: Vec<u64> = (0..rounds).flat_map(|_| 0..k).collect();
        let (ids, n, _) = prepare(&keys);
        let caps = [k - 1, k, k + 1];
        let want = vec![0, (rounds - 1) * k, (rounds - 1) * k];
        assert_eq!(lru_hits(&Accesses::new(&ids, n).unwrap(), &caps, &NO).unwrap(), want, "{k} keys");
        let sampled = shards::lru_shards(&keys, 1.0, 0, k as usize + 1, &NO).unwrap();
        let from_stack: Vec<u64> = caps.iter().map(|&c| sampled.exact_hits[c as usize - 1]).collect();
        assert_eq!(from_stack, want, "{k} keys, bounded stack");
    }
}

#[test]
fn a_stream_takes_sizes_on_every_chunk_or_on_none() {
    let mut sized = stream::Stream::new("lru", 10, Options::default()).unwrap();
    assert_eq!(sized.feed(&[1, 2], None, Some(&[3, 4]), &NO), Ok(0));
    assert!(sized.feed(&[1], None, None, &NO).is_err(), "sizes missing after sized chunks");
    assert_eq!(sized.feed(&[], None, None, &NO), Ok(0), "an empty chunk says nothing");
    let mut unit = stream::Stream::new("lru", 10, Options::default()).unwrap();
    assert_eq!(unit.feed(&[1, 2], None, None, &NO), Ok(0));
    assert!(unit.feed(&[1], None, Some(&[1]), &NO).is_err(), "sizes given after unit chunks");
    assert_eq!(unit.feed(&[1, 2], None, None, &NO), Ok(2));
}

#[test]
fn a_policy_is_empty_until_its_first_miss() {
    use super::demand::{Demand, Evict};
    use super::policies::fifo::Fifo;
    let mut p = <Demand<Fifo> as Policy>::new(2, 4, Options::default());
    assert!(p.is_empty());
    assert!(!p.step::<false>(3, 1, NEVER) && !p.is_empty() && p.contains(3));
    let mut order = <Fifo as Evict>::new(2, 4, Options::default());
    assert!(Evict::is_empty(&order));
    Evict::insert(&mut order, 1, NEVER);
    assert!(!Evict::is_empty(&order));
}

#[test]
fn after_a_replay_every_row_holds_what_it_says() {
    // Offline rows included (OPT answers `contains` and `len` from its own next-use table).
    let keys = lcg_trace(3_000, 120, 5);
    let (ids, n, next) = prepare(&keys);
    let a = view(&ids, n, &next);
    for p in TABLE {
        let capacity = (p.min_capacity() * 2).max(20);
        let mut policy = AnyPolicy::new(p.name, capacity, n, Options::default()).unwrap();
        policy.run(&a, &mut []).unwrap();
        let held = (0..n as u32).filter(|&id| policy.contains(id)).count();
        // Belady-size lets every object go at its last use: after a whole trace it holds none.
        let some = held > 0 || p.name == "belady-size";
        assert!(some && held == policy.len() && held as u64 <= capacity, "{}: {held} held", p.name);
        assert_eq!(policy.used(), held as u64, "{}: unit sizes", p.name);
    }
}
