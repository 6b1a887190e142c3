//! Golden behaviour of every policy, with no Python involved: short sequences checked by hand
//! (each with its hit mask and the step that decides it), and miss counts on seeded synthetic
//! traces generated here, recorded from libCacheSim (the `libcachesim` 0.3.5 package, request
//! by request equal to ours; a policy it does not have, or a randomised one, whose libCacheSim
//! class draws from another generator, takes the reference engine's, at seed 0).
//! `tests/cache/test_core_golden.py` regenerates these traces in Python and checks every count
//! below against libCacheSim again, so they cannot drift; for a new policy it prints the rows
//! to add here.
//!
//! Each count is checked through every loop that reaches a policy: a replay with and without
//! hit flags, an online cache fed one access at a time, and (GDSF) a replay with every cost at
//! its default.

use super::keys::{dense_ids, id_keys, next_use};
use super::online::Online;
use super::*;
use crate::cancel::Cancel;
use crate::hash::{splitmix64, SplitMix64};

static NO: Cancel = Cancel::new();

/// The golden trace: 3 accesses in 4 go to `n` hot keys with a cubic skew (key 0 alone takes
/// about n^(-1/3) of them), 1 in 8 to a key never seen before (a scan), 1 in 8 to a loop over
/// 300 keys. Every policy evicts thousands of times on it, at every capacity below.
pub(crate) fn golden_trace(seed: u64, len: u64, n: u64) -> Vec<u64> {
    let mut rng = SplitMix64(seed);
    let mut scan = 0;
    (0..len)
        .map(|i| {
            let x = rng.next_u64();
            match x >> 61 {
                0 => {
                    scan += 1;
                    (1 << 40) | scan
                }
                1 => (1 << 41) | (i % 300),
                _ => {
                    let u = (x & 0xFFFF_FFFF) % n;
                    u * u * u / (n * n)
                }
            }
        })
        .collect()
}

/// The size of `key` in the sized golden trace: 1 to `max` bytes, fixed per key.
pub(crate) fn golden_size(key: u64, max: u64) -> u64 {
    1 + splitmix64(key) % max
}

/// Unit sizes: `golden_trace(1, 20_000, 1_000)`; (policy, [(capacity in objects, misses)]).
const UNIT_MISSES: &[(&str, [(u64, u64); 3])] = &[
    ("fifo", [(20, 18427), (100, 16150), (500, 10418)]),
    ("lru", [(20, 18167), (100, 15692), (500, 9643)]),
    ("lfu", [(20, 16661), (100, 13902), (500, 7857)]),
    ("clock", [(20, 18001), (100, 15485), (500, 9246)]),
    ("arc", [(20, 16652), (100, 14035), (500, 8091)]),
    ("opt", [(20, 14669), (100, 10570), (500, 5004)]),
    ("belady-size", [(20, 14669), (100, 10570), (500, 5004)]),
    ("sieve", [(20, 16577), (100, 13860), (500, 7856)]),
    ("s3fifo", [(20, 16411), (100, 13786), (500, 8199)]),
    ("twoq", [(20, 16776), (100, 14265), (500, 8685)]),
    ("lirs", [(20, 16575), (100, 13943), (500, 7957)]),
    ("clockpro", [(20, 18166), (100, 16589), (500, 12969)]),
    ("clock2qplus", [(20, 16566), (100, 13953), (500, 8268)]),
    ("gdsf", [(20, 17511), (100, 14818), (500, 8646)]),
    ("size", [(20, 17415), (100, 15775), (500, 9517)]),
    ("random", [(20, 18450), (100, 16063), (500, 10391)]),
    ("hyperbolic", [(20, 17808), (100, 15302), (500, 8899)]),
    ("lecar", [(20, 17943), (100, 15629), (500, 9275)]),
    ("cacheus", [(20, 17623), (100, 14116), (500, 7800)]),
    ("lhd", [(20, 16724), (100, 14286), (500, 9134)]),
    ("slru", [(20, 16706), (100, 14039), (500, 8292)]),
    ("lruk", [(20, 16446), (100, 13893), (500, 7857)]),
    ("lruprob", [(20, 18297), (100, 15835), (500, 9976)]),
    ("flashprob", [(20, 18403), (100, 16014), (500, 10251)]),
    ("mq", [(20, 16328), (100, 13425), (500, 7741)]),
    ("wtinylfu", [(100, 13902), (200, 11965), (500, 7797)]),
    ("lfuda", [(20, 17572), (100, 14838), (500, 8654)]),
];

/// Sizes `golden_size(key, 100)`: `golden_trace(2, 20_000, 1_000)`; (policy, [(capacity in
/// bytes, misses)]).
const SIZED_MISSES: &[(&str, [(u64, u64); 3])] = &[
    ("fifo", [(1000, 18384), (5000, 16019), (25000, 10261)]),
    ("lru", [(1000, 18092), (5000, 15584), (25000, 9501)]),
    ("lfu", [(1000, 16776), (5000, 14328), (25000, 7747)]),
    ("clock", [(1000, 17957), (5000, 15410), (25000, 9147)]),
    ("arc", [(1000, 16780), (5000, 13905), (25000, 7744)]),
    ("opt", [(1000, 14674), (5000, 10451), (25000, 4951)]),
    ("belady-size", [(1000, 13759), (5000, 9430), (25000, 4547)]),
    ("sieve", [(1000, 16614), (5000, 13986), (25000, 7749)]),
    ("s3fifo", [(1000, 16431), (5000, 13749), (25000, 8029)]),
    ("twoq", [(1000, 16837), (5000, 14207), (25000, 8546)]),
    ("lirs", [(1000, 18668), (5000, 13857), (25000, 7653)]),
    ("clockpro", [(1000, 19057), (5000, 16221), (25000, 12920)]),
    ("clock2qplus", [(1000, 16574), (5000, 13954), (25000, 8121)]),
    ("gdsf", [(1000, 16557), (5000, 13206), (25000, 7159)]),
    ("size", [(1000, 18332), (5000, 15984), (25000, 10630)]),
    ("random", [(1000, 18341), (5000, 16052), (25000, 10337)]),
    ("hyperbolic", [(1000, 17769), (5000, 15207), (25000, 8826)]),
    ("lecar", [(1000, 17643), (5000, 15147), (25000, 9037)]),
    ("cacheus", [(1000, 17329), (5000, 14684), (25000, 8223)]),
    ("lhd", [(1000, 16857), (5000, 13602), (25000, 7685)]),
    ("slru", [(1000, 16648), (5000, 13830), (25000, 8277)]),
    ("lruk", [(1000, 16442), (5000, 14227), (25000, 7747)]),
    ("lruprob", [(1000, 18234), (5000, 15728), (25000, 9779)]),
    ("flashprob", [(1000, 18323), (5000, 16017), (25000, 10144)]),
    ("mq", [(1000, 16198), (5000, 13319), (25000, 7568)]),
    ("wtinylfu", [(1000, 18668), (5000, 13668), (25000, 7484)]),
    ("lfuda", [(1000, 17417), (5000, 14757), (25000, 8700)]),
];

/// The misses of `policy` on `keys` (with `sizes`, if not empty), by every path that reaches
/// it; they must all agree.
fn misses_every_way(policy: &str, capacity: u64, keys: &[u64], sizes: &[u64]) -> u64 {
    let mut ids = vec![0; keys.len()];
    let n = dense_ids(keys, &mut ids, &NO).unwrap();
    let mut next = vec![0; keys.len()];
    next_use(&ids, n, &mut next, &NO).unwrap();
    let by_id = id_keys(keys, &ids, n);
    let mut a = Accesses::new(&ids, n).unwrap().with_next_use(&next).unwrap().with_keys(&by_id).unwrap();
    if !sizes.is_empty() {
        a = a.with_sizes(sizes).unwrap();
    }
    let o = Options::default();
    let hits = replay(policy, capacity, &a, o, &mut [], &NO).unwrap();
    let mut mask = vec![false; keys.len()];
    assert_eq!(replay(policy, capacity, &a, o, &mut mask, &NO).unwrap(), hits, "{policy} {capacity}");
    assert_eq!(mask.iter().filter(|&&h| h).count() as u64, hits, "{policy} {capacity}");
    let info = info(policy).unwrap();
    if info.takes_costs {
        let costs = vec![GDSF_SCALE; keys.len()];
        let costed = a.with_costs(&costs).unwrap();
        assert_eq!(replay(policy, capacity, &costed, o, &mut [], &NO).unwrap(), hits, "{policy} {capacity}");
    }
    if !info.offline {
        let mut c = Online::new(policy, capacity, o, !sizes.is_empty(), false).unwrap();
        let size = |i: usize| sizes.get(i).copied();
        let online = (0..keys.len()).filter(|&i| c.access(keys[i].into(), size(i), None).unwrap()).count();
        assert_eq!(online as u64, hits, "{policy} {capacity} online");
        assert!(c.used() <= capacity, "{policy} {capacity}: {} held", c.used());
    }
    keys.len() as u64 - hits
}

#[test]
fn the_golden_traces_make_every_policy_evict() {
    let keys = golden_trace(1, 20_000, 1_000);
    let mut distinct = keys.clone();
    distinct.sort_unstable();
    distinct.dedup();
    // 2,556 one-off keys, the loop's 300 and 615 of the hot ones.
    assert_eq!(distinct.len(), 2_556 + 300 + 615);
    assert_eq!(keys.iter().filter(|&&k| k >> 40 == 1).count(), 2_556);
    assert_eq!(keys.iter().filter(|&&k| k == 0).count(), 1_470, "key 0 takes about 10% of the hot accesses");
    assert_eq!(keys[..6], [68, 89, 658, 15, 8, 0]);
    assert_eq!(golden_size(12_345, 100), 1 + splitmix64(12_345) % 100);
}

#[test]
fn unit_miss_counts_equal_libcachesim() {
    let keys = golden_trace(1, 20_000, 1_000);
    for &(policy, row) in UNIT_MISSES {
        for (capacity, misses) in row {
            assert_eq!(misses_every_way(policy, capacity, &keys, &[]), misses, "{policy} at {capacity}");
        }
    }
}

#[test]
fn sized_miss_counts_equal_libcachesim() {
    let keys = golden_trace(2, 20_000, 1_000);
    let sizes: Vec<u64> = keys.iter().map(|&k| golden_size(k, 100)).collect();
    for &(policy, row) in SIZED_MISSES {
        for (capacity, misses) in row {
            assert_eq!(misses_every_way(policy, capacity, &keys, &sizes), misses, "{policy} at {capacity} bytes");
        }
    }
}

#[test]
fn every_policy_has_golden_counts() {
    let names: Vec<&str> = TABLE.iter().map(|p| p.name).collect();
    for table in [UNIT_MISSES, SIZED_MISSES] {
        assert_eq!(table.iter().map(|row| row.0).collect::<Vec<_>>(), names);
    }
}

// ------------------------------------------------------------------ hand-checked sequences

/// The hit mask of `keys` through `policy`, as a string (H: hit, .: miss), by replay; the
/// online cache (where there is one) must give the same.
fn mask(policy: &str, capacity: u64, keys: &[u64], options: Options) -> String {
    let mut ids = vec![0; keys.len()];
    let n = dense_ids(keys, &mut ids, &NO).unwrap();
    let mut next = vec![0; keys.len()];
    next_use(&ids, n, &mut next, &NO).unwrap();
    let a = Accesses::new(&ids, n).unwrap().with_next_use(&next).unwrap();
    let mut flags = vec![false; keys.len()];
    replay(policy, capacity, &a, options, &mut flags, &NO).unwrap();
    if !info(policy).unwrap().offline {
        let mut c = Online::new(policy, capacity, options, false, false).unwrap();
        let online: Vec<bool> = keys.iter().map(|&k| c.access(k.into(), None, None).unwrap()).collect();
        assert_eq!(online, flags, "{policy}: online and replay differ");
    }
    flags.iter().map(|&h| if h { 'H' } else { '.' }).collect()
}

fn plain(policy: &str, capacity: u64, keys: &[u64]) -> String {
    mask(policy, capacity, keys, Options::default())
}

#[test]
fn fifo_evicts_the_oldest_whatever_its_hits() {
    // 3 evicts 1 (the oldest, though just hit), then 1 evicts 2, and 2 evicts 3.
    assert_eq!(plain("fifo", 2, &[1, 2, 1, 3, 1, 2]), "..H...");
}

#[test]
fn lru_evicts_the_least_recent() {
    // The hit makes 1 recent: 3 evicts 2, so 1 hits again; 2 then evicts 3.
    assert_eq!(plain("lru", 2, &[1, 2, 1, 3, 1, 2]), "..H.H.");
    // 4 evicts 2 (1 was refreshed), 2 evicts 3, 5 evicts 1, 1 evicts 4, 3 evicts 2.
    assert_eq!(plain("lru", 3, &[1, 2, 3, 1, 4, 2, 5, 1, 3]), "...H.....");
}

#[test]
fn lfu_evicts_the_least_frequent_and_the_least_recent_of_a_tie() {
    // 1 counts 2; 3 evicts 2 (count 1); 2 evicts 3 (count 1 against 1's 2); 1 hits twice.
    assert_eq!(plain("lfu", 2, &[1, 1, 2, 3, 2, 1, 1]), ".H...HH");
    // Ties at count 1: 3 evicts 1 (least recent), 1 evicts 2, 2 evicts 3: no hit at all.
    assert_eq!(plain("lfu", 2, &[1, 2, 3, 1, 2]), ".....");
    // Counts live only while cached: 4 evicts 3 (count 1, 1 and 2 count 2); 3 comes back at
    // count 1 and evicts 4; 1 and 2 hit; 4 evicts 3 again.
    assert_eq!(plain("lfu", 3, &[1, 1, 2, 2, 3, 4, 3, 1, 2, 4]), ".H.H...HH.");
}

#[test]
fn clock_gives_a_referenced_object_a_second_chance() {
    // The hit sets 1's bit. 4: the hand clears 1's bit and moves on, 2 (clear) leaves, so 1 hits.
    assert_eq!(plain("clock", 3, &[1, 2, 3, 1, 4, 1, 2]), "...H.H.");
    // 4 evicts 2, 2 evicts 3 (the hand rests after 2), 3 evicts 1 (its bit cleared by the
    // first sweep), 1 evicts 4.
    assert_eq!(plain("clock", 3, &[1, 2, 3, 1, 4, 2, 3, 1]), "...H....");
    // With every bit set on insert, 3's sweep clears 1 and 2 and comes back to 1, which leaves;
    // by default 2 (bit clear) leaves and 1, referenced, stays.
    let textbook = Options::new().with("bit_on_insert", Value::Flag(true)).unwrap();
    assert_eq!(mask("clock", 2, &[1, 2, 1, 3, 1], textbook), "..H..");
    assert_eq!(plain("clock", 2, &[1, 2, 1, 3, 1]), "..H.H");
}

#[test]
fn arc_adapts_its_target_on_ghost_hits() {
    // Capacity 2. 1 is hit (T2 = [1]); 3 pushes 2 from T1 to the ghost list B1. 2 is a ghost
    // hit in B1: p grows to 1, REPLACE (T1 = [3] is not over p) sends 1 to B2, 2 enters T2. 1
    // is a ghost hit in B2: p falls to 0, 3 goes to B1. 3 is a ghost hit in B1 (p = 1), T1 is
    // empty, 2 goes to B2; 2 is a ghost hit in B2 (p = 0), 1 goes to B2; 3 is in T2 and hits.
    // Were a B1 hit to shrink p, 2's ghost hit would evict 3 instead of 1 and 1 would hit.
    assert_eq!(plain("arc", 2, &[1, 1, 2, 3, 2, 1, 3, 2, 3]), ".H......H");
    // A longer run, checked against libCacheSim request by request.
    assert_eq!(plain("arc", 3, &[1, 1, 2, 2, 3, 4, 5, 1, 2, 4, 5, 3]), ".H.H...HH.H.");
}

#[test]
fn opt_evicts_the_object_used_farthest_in_the_future() {
    // 3 evicts 2 (next used after 1's next use); 1 hits; 2 evicts 1 (used after 3); 3 hits.
    assert_eq!(plain("opt", 2, &[1, 2, 3, 1, 2, 3, 1]), "...H.H.");
}

#[test]
fn belady_size_weighs_the_distance_by_the_size() {
    // Unit sizes: OPT's order.
    assert_eq!(plain("belady-size", 2, &[1, 2, 3, 1, 2, 3, 1]), "...H.H.");
    // 10 bytes: 1 (2 bytes), 2 (8 bytes), then 3 (2 bytes) needs room at time 3 (accesses
    // counted from 1): 1 scores ln 2 + ln(5 - 3), 2 scores ln 8 + ln(4 - 3), so 2 leaves though
    // 1 is used later (OPT would evict 1). 3 hits, its last use: it leaves. 2 misses, never
    // used again: not admitted. 1 hits.
    let keys = [1, 2, 3, 3, 2, 1];
    let sizes = [2, 8, 2, 2, 8, 2];
    let mut ids = vec![0; keys.len()];
    let n = dense_ids(&keys, &mut ids, &NO).unwrap();
    let mut next = vec![0; keys.len()];
    next_use(&ids, n, &mut next, &NO).unwrap();
    let a = Accesses::new(&ids, n).unwrap().with_next_use(&next).unwrap().with_sizes(&sizes).unwrap();
    let mut flags = vec![false; keys.len()];
    for (policy, want) in [("belady-size", "...H.H"), ("opt", "...HH.")] {
        replay(policy, 10, &a, Options::default(), &mut flags, &NO).unwrap();
        let got: String = flags.iter().map(|&h| if h { 'H' } else { '.' }).collect();
        assert_eq!(got, want, "{policy}");
    }
}

#[test]
fn sieve_keeps_visited_objects_where_they_are() {
    // 4: the hand clears 1's visited bit and evicts 2; 5 evicts 3 (the hand rests after 2);
    // 1 stays and hits.
    assert_eq!(plain("sieve", 3, &[1, 2, 3, 1, 4, 5, 1, 2]), "...H..H.");
    // Every object visited: the hand clears 1, 2 and 3, passes the front (3, the newest) and
    // wraps to the back, where 1 (cleared) leaves; 3 stays and hits. A hand that wrapped to the
    // front would evict 3 instead; one that evicted at once (CLOCK without a second chance for
    // the newest) would keep 1.
    assert_eq!(plain("sieve", 3, &[1, 2, 3, 1, 2, 3, 4, 3, 2, 1]), "...HHH.HH.");
}

#[test]
fn s3fifo_sends_a_ghost_hit_to_main() {
    // Capacity 20: small holds 2, main 18, the ghost 18. 1 and 2 fill small, 3..=20 go to main
    // (small is full before the first eviction). 21 evicts small's 1 into the ghost. 1 is a
    // ghost hit: 2 leaves small for the ghost and 1 enters main. 22 finds main over its size
    // and evicts main's oldest (3); 23 evicts small's 21. 1, in main, hits. Had the ghost hit
    // been ignored, 1 would have entered small behind 21 and left it at 23.
    let mut keys: Vec<u64> = (1..=21).collect();
    keys.extend([1, 22, 23, 1]);
    assert_eq!(plain("s3fifo", 20, &keys), format!("{}H", ".".repeat(24)));
    // 15 objects make small a single object, which libCacheSim never inserts: no hit ever.
    let mut keys: Vec<u64> = [1, 2, 3].repeat(3);
    keys.extend(10..40);
    keys.extend([1, 2, 3]);
    assert_eq!(plain("s3fifo", 15, &keys), ".".repeat(keys.len()));
    // At 25 small holds 2: the first rounds of 1, 2, 3 hit, and so do the last (in main).
    assert_eq!(plain("s3fifo", 25, &keys), format!("...HHHHHH{}HHH", ".".repeat(30)));
}

#[test]
fn twoq_promotes_an_id_found_in_aout() {
    // Capacity 4: Ain holds 1, Aout 2 ids, Am 3. 1..=4 fill Ain; 5 pushes 1 to Aout; 1, found
    // in Aout, goes to Am (2 is pushed to Aout) and hits next. 6, 7, 8 and 9 push 3, 4, 5 and 6
    // through Ain and Aout; 1 stays in Am and hits. Were Aout ignored, 1 would have entered
    // Ain and left it at 9.
    assert_eq!(plain("twoq", 4, &[1, 2, 3, 4, 5, 1, 1, 6, 7, 8, 9, 1]), "......H....H");
    // A hit in Ain changes nothing: 1 leaves first all the same.
    assert_eq!(plain("twoq", 4, &[1, 2, 3, 4, 1, 5, 1]), "....H..");
    assert_eq!(plain("twoq", 4, &[1, 2, 3].repeat(3)), "...HHHHHH");
}

#[test]
fn lirs_keeps_its_lir_blocks_against_a_scan() {
    // Capacity 2: LIR limit 1, HIR limit 1. 1 enters as LIR; 2 and then 3 as resident HIR (3
    // evicts 2, which stays in S, non-resident). 1 hits (LIR). 2 misses, is found non-resident
    // in S: it turns LIR and 1 is demoted to Q (3 leaves for it). 2 hits; 1 hits in Q.
    assert_eq!(plain("lirs", 2, &[1, 2, 3, 1, 2, 2, 1]), "...H.HH");
}

#[test]
fn clockpro_keeps_what_fits_its_cold_target_and_never_evicts() {
    // Capacity 4, cold target 2 (half): 1 and 2 enter, 3 is refused (the target is full), and
    // nothing ever leaves (libCacheSim's ClockPro; see policies/clockpro.rs).
    assert_eq!(plain("clockpro", 4, &[1, 2, 3, 1, 2, 3]), "...HH.");
}

#[test]
fn clock2qplus_sends_a_ghost_hit_to_main() {
    // Capacity 20: small FIFO 2, main 18. 1 and 2 enter the small FIFO, 3..20 main (warm-up:
    // the small FIFO is full and nothing has left yet). 21 evicts the small FIFO's oldest, 1,
    // to the ghost; 1 misses, is found in the ghost (2 goes to the ghost to make room) and
    // enters main, which now holds 19; 22 evicts from main (over its 18): its oldest, 3,
    // unreferenced. 3 misses; 1 hits in main; 2 misses (a ghost hit is a miss).
    let mut keys: Vec<u64> = (1..=20).collect();
    keys.extend([21, 1, 22, 3, 1, 2]);
    assert_eq!(plain("clock2qplus", 20, &keys), format!("{}{}", ".".repeat(24), "H."));
}

#[test]
fn gdsf_evicts_the_lowest_priority_and_inflates() {
    // Capacity 3, every cost 1e6. 1 is hit (priority 2e6). 4 enters at 1e6 and, as the least
    // recent of the 1e6 ties (2, 3, 4), 2 leaves (L = 1e6). 2 returns at L + 1e6 = 2e6 and
    // evicts 3 (1e6, less recent than 4); it hits (L + 2e6 = 3e6). 5 enters at 2e6 and
    // evicts 4, the only one left at 1e6; 1 hits.
    assert_eq!(plain("gdsf", 3, &[1, 1, 2, 3, 4, 2, 2, 5, 1]), ".H....H.H");
    // Capacity 1: the newcomer 2 (1e6) is the lowest and leaves at once, 1 (2e6) stays; the
    // second 2 enters at L + 1e6 = 2e6, ties with 1, and 1, accessed earlier, goes.
    assert_eq!(plain("gdsf", 1, &[1, 1, 2, 2, 1]), ".H...");
}

/// A seed for the randomised policies.
fn seeded(seed: u64) -> Options {
    Options::new().with("seed", Value::Int(seed.into())).unwrap()
}

#[test]
fn random_evicts_the_drawn_object() {
    // Seed 0: splitmix64's first draws below 2 are 1, 0, 0, 1. At 3 the members are [1, 2]:
    // position 1 (2) leaves, so 1 hits and 2 misses.
    assert_eq!(plain("random", 2, &[1, 2, 3, 1, 2]), "...H.");
    // Capacity 1: the only object leaves, whatever the draw.
    assert_eq!(mask("random", 1, &[1, 1, 2, 1], seeded(7)), ".H..");
}

#[test]
fn hyperbolic_evicts_the_lowest_count_over_age() {
    // At 3 (request 5): 1 has 3 accesses over 4 requests (0.75), 2 has 1 over 1: 1 leaves,
    // although the most used. At 1 (request 6): 2 is at 1/2, 3 at 1/1: 2 leaves. With 64
    // draws, both objects are drawn (all 64 on one has odds 2**-63).
    assert_eq!(plain("hyperbolic", 2, &[1, 1, 1, 2, 3, 1, 2]), ".HH....");
    // One draw per eviction: the drawn object leaves, whatever its priority. Seed 0 draws
    // position 1 (2) at 3, so 1 stays and hits, and 2 misses.
    let one = seeded(0).with("samples", Value::Int(1)).unwrap();
    assert_eq!(mask("hyperbolic", 2, &[1, 1, 1, 2, 3, 1, 2], one), ".HH..H.");
}

#[test]
fn lecar_follows_the_drawn_expert_and_learns_from_its_history() {
    // Capacity 2. At 3, LRU would evict 1 and LFU 2 (count 1); the first draw (88 of 100) is
    // not below w_lru = 0.5, so LFU's choice leaves and 1 hits. 2 then misses and is found in
    // LFU's history; entering, it evicts 3, both experts' choice (LRU's least recent, LFU's
    // lowest count), remembered by neither.
    assert_eq!(plain("lecar", 2, &[1, 1, 2, 3, 1, 2]), ".H..H.");
    // The same with LRU's choice (seed 3's first draw is below 50): 1 leaves and misses.
    assert_eq!(mask("lecar", 2, &[1, 1, 2, 3, 1], seeded(3)), ".H...");
}

#[test]
fn cacheus_keeps_hit_objects_through_a_scan_and_follows_the_drawn_expert() {
    // Capacity 4: SR and R hold 2 each. 1 and 2, hit once, move from SR to R (count 2); the
    // scan 3, 4 fills SR, and 5 needs an eviction: SR-LRU's candidate is SR's oldest (3),
    // CR-LFU's the last to reach the lowest count (4). Either way 1 and 2 stay and hit, where
    // LRU evicts 1 at 5. Seed 0's eviction draw (43 of 100, after the learning rate's) is
    // below w_lru = 0.5: 3 leaves and misses; seed 1's (74) is not: 4 leaves and 3 hits.
    assert_eq!(plain("cacheus", 4, &[1, 1, 2, 2, 3, 4, 5, 1, 2, 3]), ".H.H...HH.");
    assert_eq!(mask("cacheus", 4, &[1, 1, 2, 2, 3, 4, 5, 1, 2, 3], seeded(1)), ".H.H...HHH");
    assert_eq!(plain("lru", 4, &[1, 1, 2, 2, 3, 4, 5, 1, 2, 3]), ".H.H......");
}

#[test]
fn lhd_evicts_the_lowest_hit_density() {
    // Early on, every age is 0 (ages are shifted right by 10) and the densities are the initial
    // (16 + class + 1) / (age + 1): a newcomer (hit ages 0 and 20,000, class 0) has 17, an
    // object hit at age 0 (class 15) has 32. At 3, of 1 (hit) and 2 (new), the draws find 2
    // (all eight on 1 has odds 2**-8; not with these seeds), so 1 stays and hits, where LRU
    // would have evicted it.
    for seed in 0..3 {
        assert_eq!(mask("lhd", 2, &[1, 1, 2, 3, 1], seeded(seed)), ".H..H", "seed {seed}");
    }
    assert_eq!(plain("lru", 2, &[1, 1, 2, 3, 1]), ".H...");
    // At 4, 1 and 2 have been hit (32) and 3 has not (17): 3 leaves if one of the eight draws
    // finds it (all miss it with odds (2/3)**8, 4%; seed 0 finds it), and 1 and 2 hit.
    assert_eq!(plain("lhd", 3, &[1, 2, 3, 1, 2, 4, 1, 2]), "...HH.HH");
}

#[test]
fn slru_promotes_a_hit_one_segment_and_cools_the_segment_it_fills() {
    // Capacity 4, 4 segments of 1: 1..=4 fill segments 0..=3 (the lowest with room). 5 evicts
    // 1 (the lowest segment's) and enters segment 0. 2 rises to segment 2, whose 3 drops to 1;
    // 3 rises again and 2 drops. 6 and 1 each evict segment 0's object (5, then 6); 4, in the
    // top segment since it entered, hits; 5 is gone.
    let keys = [1, 2, 3, 4, 5, 2, 3, 6, 1, 4, 5];
    assert_eq!(plain("slru", 4, &keys), ".....HH..H.");
    // 2 segments of 2: 3 and 4 start in the top segment, but each hit there pushes its least
    // recent down, and 4 is evicted from segment 0 by 1.
    let two = Options::new().with("segments", Value::Int(2)).unwrap();
    assert_eq!(mask("slru", 4, &keys, two), ".....HH....");
}

#[test]
fn lruk_evicts_the_oldest_kth_access_and_the_young_first() {
    // K = 2, capacity 2. 1 is seen twice, 2 once: 3 evicts 2 (fewer than K accesses), and 1
    // hits; LRU would have evicted 1.
    assert_eq!(plain("lruk", 2, &[1, 1, 2, 3, 1]), ".H..H");
    // Both seen twice: at 3, 1's second most recent access (time 2) is older than 2's (4), so
    // 1 leaves although it was used last, and 2 hits.
    assert_eq!(plain("lruk", 2, &[1, 1, 2, 2, 1, 3, 2]), ".H.HH.H");
    // K = 1 is LRU: 2, the least recent, leaves at 3.
    let one = Options::new().with("k", Value::Int(1)).unwrap();
    assert_eq!(mask("lruk", 2, &[1, 1, 2, 2, 1, 3, 2], one), ".H.HH..");
}

#[test]
fn flashprob_keeps_an_lru_in_ram_over_a_fifo_on_flash() {
    // Capacity 4, ram_size_ratio 0.5: flash holds 2, RAM whatever flash leaves. Every object
    // goes to flash at disk_admit_prob 1. 1..=4 fill RAM (all 4: RAM's share bounds nothing);
    // 5 sends 1, 2 and 3 to flash, where 3 pushes 1 out: RAM [4, 5], flash [2, 3]. A hit on
    // flash (2) changes nothing, so 6, sending 4 to flash, pushes 2 out and 2 misses; LRU
    // keeps it.
    let at = |prob: f64| {
        let o = seeded(0).with("ram_size_ratio", Value::Real(0.5)).unwrap();
        o.with("disk_admit_prob", Value::Real(prob)).unwrap()
    };
    assert_eq!(mask("flashprob", 4, &[1, 2, 3, 4, 5, 2, 6, 2], at(1.0)), ".....H..");
    assert_eq!(plain("lru", 4, &[1, 2, 3, 4, 5, 2, 6, 2]), ".....H.H");
    // A hit in RAM (4) moves it to RAM's recent end: 6 sends 5 to flash instead, 7 then 4,
    // which hits there.
    assert_eq!(mask("flashprob", 4, &[1, 2, 3, 4, 5, 4, 6, 7, 4], at(1.0)), ".....H..H");
    // At 0.5 one object leaving RAM in 2 enters flash; seed 0's draws below 2 are 1, 0, 0, 1:
    // at 5, 1 is dropped (room made at once); at 6, 2 and 3 go to flash and 4 is dropped, so
    // 2 and 3 hit. At 1, 2 and 3 were pushed out of flash by then.
    assert_eq!(mask("flashprob", 4, &[1, 2, 3, 4, 5, 6, 2, 3, 4], at(0.5)), "......HH.");
    assert_eq!(mask("flashprob", 4, &[1, 2, 3, 4, 5, 6, 2, 3, 4], at(1.0)), ".........");
}

#[test]
fn wtinylfu_fills_main_from_the_window_then_admits_by_count() {
    // Capacity 100: a window of 1, main 99 (probation 19, protected 79). 0..=99 fill the cache
    // (the window holds what the cache has room for); 100 moves 0..=98 into main (19 into
    // probation, 79 into protected, 98 into probation over its share), then 99, counted once,
    // loses to probation's oldest, 0, counted twice, and leaves. 99 returns and 100 loses the
    // same way; 0 hits, rises to protected, whose oldest (19) cools down to probation, whose
    // oldest (1) then leaves: 1 misses.
    let mut keys: Vec<u64> = (0..=100).collect();
    keys.extend([99, 0, 1]);
    assert_eq!(&plain("wtinylfu", 100, &keys)[100..], "..H.");
}

#[test]
fn mq_ranks_by_log_count_remembers_counts_in_qout_and_demotes_the_expired() {
    // Capacity 2. 1, hit, rises to queue 1; 3 evicts 2 from queue 0 into Qout, and 1 hits.
    // 2 evicts 3 and returns from Qout with count 2 (queue 1); 3 then evicts queue 1's least
    // recent, 1, and 2 hits. LRU would miss both (".H.....H").
    assert_eq!(plain("mq", 2, &[1, 1, 2, 3, 1, 2, 3, 2]), ".H..H..H");
    // Lifetime 1: 1 expires in queue 1 when 2 enters and drops to queue 0, where 3 and 4
    // evict 2 and then 1; with the default lifetime 1 stays in queue 1 and hits.
    let keys = [1, 1, 2, 3, 4, 1];
    assert_eq!(plain("mq", 2, &keys), ".H...H");
    let short = Options::new().with("lifetime", Value::Int(1)).unwrap();
    assert_eq!(mask("mq", 2, &keys, short), ".H....");
}

#[test]
fn lfuda_ages_old_counts_away() {
    // Capacity 2. 1 (priority 2) keeps its place over 2 (1): 3 evicts 2 (L = 1) and 1 hits
    // (1 + 3 = 4). 4 evicts 3 (2; L = 2), 5 evicts 4 (3; L = 3) and enters at 4, tying with 1,
    // which took 4 first: 6 evicts 1, accessed three times, and 1 misses. LFU keeps 1.
    let keys = [1, 1, 2, 3, 1, 4, 5, 6, 1];
    assert_eq!(plain("lfuda", 2, &keys), ".H..H....");
    assert_eq!(plain("lfu", 2, &keys), ".H..H...H");
}
