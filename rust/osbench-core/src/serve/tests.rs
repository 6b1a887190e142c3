use super::vllm::block_pool::BlockPool;
use super::*;
use crate::cancel::Cancel;
use crate::error::Error;

/// Binary fractions keep every time exact: 1 s a step, 0.25 s a prefill token, 0.5 s a decode.
const STEP: StepTime = StepTime::Linear([1.0, 0.25, 0.5, 0.0]);

/// Settings with vLLM's defaults for what these tests do not vary.
fn settings(num_blocks: u64, block_size: u64, budget: u64, seqs: u64, max_len: u64) -> Settings {
    Settings {
        num_blocks,
        block_size,
        max_num_batched_tokens: budget,
        max_num_seqs: seqs,
        max_model_len: max_len,
        ..Settings::default()
    }
}

fn config(num_blocks: u64, block_size: u64, budget: u64, seqs: u64, max_len: u64) -> Config {
    Config::new(settings(num_blocks, block_size, budget, seqs, max_len)).unwrap()
}

fn run(reqs: &Requests, cfg: &Config, options: Options) -> Result<Run> {
    simulate(reqs, cfg, &STEP, options, &Cancel::new())
}

const RECORD: Options =
    Options { record: true, jump: true, concurrency: None, turnaround: 0.0, warmup: 0, steps: true };

/// Step `j`'s scheduled (request, tokens).
fn scheduled(run: &Run, j: usize) -> Vec<(i64, i64)> {
    let r = run.record.as_ref().unwrap();
    let (a, b) = (r.scheduled_offsets[j] as usize, r.scheduled_offsets[j + 1] as usize);
    r.scheduled_request[a..b].iter().copied().zip(r.scheduled_tokens[a..b].iter().copied()).collect()
}

// ------------------------------------------------------------------ the block pool

/// Blocks that cannot fit are an error, never an abort: the pool makes room before it takes
/// them (here more than an address space holds, refused without allocating), and is left as
/// it was.
#[test]
fn blocks_that_do_not_fit_in_memory_are_an_error_not_an_abort() {
    let mut pool = BlockPool::new(u64::MAX, false);
    let mut got = Vec::new();
    let err = pool.get_new_blocks(u64::MAX / 4, &mut got).unwrap_err();
    assert!(matches!(&err, Error::OutOfMemory { what } if what.starts_with("the KV blocks")), "{err}");
    assert!(got.is_empty() && pool.num_free_blocks() == u64::MAX - 1);
    pool.get_new_blocks(2, &mut got).unwrap();
    assert_eq!(got, [1, 2]);
}

#[test]
fn the_free_queue_hands_out_untouched_blocks_in_id_order_then_freed_ones_by_their_end() {
    let mut pool = BlockPool::new(6, true);
    assert_eq!(pool.num_free_blocks(), 5); // block 0 is the null block
    let mut got = Vec::new();
    pool.get_new_blocks(3, &mut got).unwrap();
    assert_eq!(got, [1, 2, 3]);
    pool.cache_block(2, 77, 0).unwrap();
    let mut scratch = Vec::new();
    // Freed last block first: 3 and 1 (no content) to the front, the first of them first; 2
    // (cached) to the back, behind the untouched 4 and 5.
    pool.free_blocks([3, 2, 1].into_iter(), &mut scratch);
    assert_eq!(pool.num_free_blocks(), 5);
    let mut order = Vec::new();
    pool.get_new_blocks(5, &mut order).unwrap();
    assert_eq!(order, [3, 1, 4, 5, 2]);
    assert_eq!(pool.get_cached_block(77), None); // taking block 2 evicted its content
    assert_eq!(pool.num_free_blocks(), 0);
}

#[test]
fn a_prefix_hit_takes_a_cached_block_out_of_the_middle_of_the_free_queue() {
    let mut pool = BlockPool::new(5, true);
    let mut got = Vec::new();
    pool.get_new_blocks(4, &mut got).unwrap();
    for (b, h) in [(1, 10), (2, 20), (3, 30), (4, 20)] {
        pool.cache_block(b, h, 0).unwrap();
    }
    assert_eq!(pool.get_cached_block(20), Some(2)); // the oldest of equal content
    let mut scratch = Vec::new();
    pool.free_blocks([1, 2, 3, 4].into_iter(), &mut scratch);
    pool.touch(&[2]);
    assert_eq!((pool.num_free_blocks(), pool.ref_cnt(2)), (3, 1));
    let mut order = Vec::new();
    pool.get_new_blocks(3, &mut order).unwrap();
    assert_eq!(order, [1, 3, 4]);
    assert_eq!((pool.get_cached_block(20), pool.num_cached_hashes()), (Some(2), 1));
}

#[test]
fn a_huge_pool_costs_only_the_blocks_a_run_touches() {
    let mut pool = BlockPool::new(1 << 62, true);
    let mut got = Vec::new();
    pool.get_new_blocks(3, &mut got).unwrap();
    assert_eq!(pool.num_free_blocks(), (1 << 62) - 4);
}

// ------------------------------------------------------------------ golden runs (tests/serve/test_reference.py)

#[test]
fn a_prefix_cached_in_a_step_is_hit_by_a_request_admitted_later_in_the_same_step() {
    let keys = [mix(1, 0), mix(1, 1), mix(1, 0), mix(1, 1)];
    let reqs = Requests {
        arrival: &[0.0, 0.0],
        prompt_len: &[10, 10],
        output_len: &[3, 3],
        keys: &keys,
        key_offsets: &[0, 2, 4],
        ..Requests::default()
    };
    let run = run(&reqs, &config(10, 4, 16, 8, 64), RECORD).unwrap();
    assert_eq!(scheduled(&run, 0), [(0, 10), (1, 2)]);
    assert_eq!(run.cached_tokens, [0, 8]);
    assert_eq!(run.context_tokens, [8, 20, 22]);
    assert_eq!(run.duration, [1.0 + 12.0 * 0.25, 2.0, 2.0]);
    assert_eq!((run.first_token, run.finish), (vec![4.0, 4.0], vec![8.0, 8.0]));
    assert_eq!((run.blocks_cached, run.blocks_used), (vec![2, 2, 4], vec![4, 4, 4]));
    assert_eq!(run.record.unwrap().free_blocks, [5, 5, 5]);
}

/// A prompt already cached whole: vLLM caps a hit at `num_tokens - 1` in whole blocks
/// (`kv_cache_manager.py: get_computed_blocks`), so a block-aligned prompt recomputes its last
/// block, one whose last block is partial hits every full block; each case tells the cap apart
/// from no cap and from a cap of one token (tests/serve/test_cached_prompt.py, both engines).
#[test]
fn a_fully_cached_block_aligned_prompt_recomputes_its_last_block() {
    // (prompt_len, block_size, blocks shared with the first request, the second's hit)
    for (prompt, block, shared, hit) in [(8, 4, 2, 4), (10, 4, 2, 8), (12, 4, 2, 8), (8, 1, 8, 7), (4, 4, 1, 0)] {
        let full = prompt / block;
        let first: Vec<u64> = (0..full).map(|k| mix(1, k)).collect();
        let second: Vec<u64> = (0..full).map(|k| if k < shared { mix(1, k) } else { mix(2, k) }).collect();
        let keys = [first, second].concat();
        let (p, n) = (prompt as i64, full as i64);
        let reqs = Requests {
            arrival: &[0.0, 100.0],
            prompt_len: &[p, p],
            output_len: &[2, 2],
            keys: &keys,
            key_offsets: &[0, n, 2 * n],
            ..Requests::default()
        };
        let run = run(&reqs, &config(64, block, 64, 4, 64), RECORD).unwrap();
        assert_eq!(run.cached_tokens, [0, hit], "prompt {prompt}, blocks of {block}, {shared} shared");
    }
}

/// Any distinct content key (the engine only compares them).
fn mix(content: u64, k: u64) -> u64 {
    crate::hash::splitmix64(content << 8 | k)
}

#[test]
fn preemption_frees_the_last_running_request_which_recomputes_and_hits_its_own_prefix() {
    let reqs = Requests { arrival: &[0.0, 0.0], prompt_len: &[3, 3], output_len: &[4, 4], ..Requests::default() };
    let keys = [mix(5, 0), mix(6, 0)];
    let reqs = Requests { keys: &keys, key_offsets: &[0, 1, 2], ..reqs };
    let run = run(&reqs, &config(5, 2, 16, 4, 16), RECORD).unwrap();
    assert_eq!(run.num_preempted, [0, 0, 1, 0, 0, 0]);
    assert_eq!(scheduled(&run, 4), [(1, 3)]);
    assert_eq!(run.start, [0.0, 2.5, 4.5, 6.0, 7.5, 9.25]);
    assert_eq!((run.first_token, run.finish), (vec![2.5, 2.5], vec![7.5, 10.75]));
    assert_eq!(run.num_waiting, [0, 0, 1, 1, 0, 0]);
    let record = run.record.unwrap();
    assert_eq!((record.admitted_request, record.admitted_hit_tokens), (vec![0, 1, 1], vec![0, 0, 2]));
}

#[test]
fn a_prompt_without_content_is_cached_as_one_whose_keys_match_no_other() {
    // No keys: each request hits only its own blocks (after a preemption), as with keys that
    // equal no other request's; the cached counts are the same too.
    let reqs = Requests { arrival: &[0.0, 0.0], prompt_len: &[3, 3], output_len: &[4, 4], ..Requests::default() };
    let keys = [mix(5, 0), mix(6, 0)];
    let keyed = Requests { keys: &keys, key_offsets: &[0, 1, 2], ..reqs };
    let cfg = config(5, 2, 16, 4, 16);
    let (ours, theirs) = (run(&reqs, &cfg, RECORD).unwrap(), run(&keyed, &cfg, RECORD).unwrap());
    assert_eq!(ours.record.as_ref().unwrap().admitted_hit_tokens, [0, 0, 2]);
    assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
    // And on a random workload with preemptions, evictions, duplicate cached blocks.
    let mut rng = Rng(11);
    let n = 40;
    let prompt: Vec<i64> = (0..n).map(|_| 1 + rng.below(40) as i64).collect();
    let output: Vec<i64> = (0..n).map(|_| 1 + rng.below(30) as i64).collect();
    let arrival: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
    let mut offsets = vec![0];
    for p in &prompt {
        offsets.push(offsets[offsets.len() - 1] + p / 4);
    }
    let keys: Vec<u64> = (0..offsets[n] as u64).map(|k| mix(k + 100, 0)).collect();
    let reqs = Requests { arrival: &arrival, prompt_len: &prompt, output_len: &output, ..Requests::default() };
    let keyed = Requests { keys: &keys, key_offsets: &offsets, ..reqs };
    let cfg = config(24, 4, 32, 6, 80);
    let (ours, theirs) = (run(&reqs, &cfg, RECORD).unwrap(), run(&keyed, &cfg, RECORD).unwrap());
    let hits = ours.record.as_ref().unwrap().admitted_hit_tokens.iter().sum::<i64>();
    assert!(ours.num_preempted.iter().sum::<i64>() > 0 && hits > 0);
    assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
}

// ------------------------------------------------------------------ the decode jump

/// xorshift64*: a small deterministic generator for random workloads.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

#[test]
fn the_decode_jump_changes_nothing_and_is_taken() {
    let mut jumped = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let n = 1 + rng.below(12) as usize;
        let block_size = [1, 2, 4, 16][rng.below(4) as usize];
        let mut t = 0.0;
        let arrival: Vec<f64> = (0..n)
            .map(|_| {
                t += [0.0, 0.5, 4.0, 40.0][rng.below(4) as usize];
                t
            })
            .collect();
        let prompt: Vec<i64> = (0..n).map(|_| 1 + rng.below(60) as i64).collect();
        let output: Vec<i64> = (0..n).map(|_| 1 + rng.below(200) as i64).collect();
        let priority: Vec<i64> = (0..n).map(|_| rng.below(3) as i64).collect();
        let predicted: Vec<i64> = (0..n).map(|_| rng.below(250) as i64).collect();
        let mut keys = Vec::new();
        let mut offsets = vec![0];
        for &p in &prompt {
            keys.extend((0..p as u64 / block_size).map(|k| mix(rng.below(2), k)));
            offsets.push(keys.len() as i64);
        }
        let need = (0..n).map(|i| (prompt[i] + output[i] - 1) as u64).max().unwrap().div_ceil(block_size);
        let seqs = 1 + rng.below(6);
        let base = settings(need + 1 + rng.below(need + 2), block_size, seqs + rng.below(64), seqs, 300);
        let cfg = Config::new(Settings {
            long_prefill_token_threshold: [0, 3][rng.below(2) as usize],
            enable_prefix_caching: rng.below(2) == 0,
            policy: POLICIES[rng.below(POLICIES.len() as u64) as usize].into(),
            watermark: rng.below(2) as f64 * 0.05,
            scheduler_reserve_full_isl: rng.below(2) == 0,
            aging: [0.0, 0.5][rng.below(2) as usize],
            mlfq_levels: 1 + rng.below(4),
            mlfq_quantum: 1 + rng.below(20),
            mlfq_growth: 1 + rng.below(3),
            mlfq_boost: [0, 7, 50][rng.below(3) as usize],
            ..base
        })
        .unwrap();
        let reqs = Requests {
            arrival: &arrival,
            prompt_len: &prompt,
            output_len: &output,
            priority: &priority,
            predicted: &predicted,
            keys: &keys,
            key_offsets: &offsets,
        };
        let stepped = run(&reqs, &cfg, Options { record: true, jump: false, ..Options::default() });
        let with_jump = run(&reqs, &cfg, RECORD);
        // Without its step rows, the same run: the same per-request times, the same errors.
        let bare = run(&reqs, &cfg, Options { steps: false, ..Options::default() });
        match (&with_jump, bare) {
            (Ok(full), Ok(bare)) => {
                assert!(bare.start.is_empty() && bare.num_seqs.is_empty() && !full.start.is_empty());
                let times = |r: &Run| {
                    (r.arrival.clone(), r.admitted.clone(), r.first_token.clone(), r.finish.clone(), r.jumped_steps)
                };
                let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
                let (a, b) = (times(full), times(&bare));
                assert!(same(&a.0, &b.0) && same(&a.1, &b.1) && same(&a.2, &b.2) && same(&a.3, &b.3), "seed {seed}");
                assert_eq!(
                    (a.4, &full.preemptions, &full.cached_tokens),
                    (b.4, &bare.preemptions, &bare.cached_tokens)
                );
            }
            (Err(a), Err(b)) => assert_eq!(a, &b, "seed {seed}"),
            (a, b) => panic!("seed {seed}: {a:?} against {b:?}"),
        }
        match (stepped, with_jump) {
            (Ok(a), Ok(mut b)) => {
                jumped += b.jumped_steps;
                b.jumped_steps = 0;
                assert_eq!(a, b, "seed {seed}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "seed {seed}"),
            (a, b) => panic!("seed {seed}: {a:?} against {b:?}"),
        }
    }
    assert!(jumped > 1000, "the jump took {jumped} steps");
}

// ------------------------------------------------------------------ runs that cannot end, bad input

#[test]
fn requests_tied_under_priority_that_preempt_one_another_forever_are_stopped() {
    let reqs = Requests { arrival: &[0.0, 0.0], prompt_len: &[3, 3], output_len: &[3, 3], ..Requests::default() };
    let cfg = Config::new(Settings {
        long_prefill_token_threshold: 1,
        enable_prefix_caching: false,
        policy: "priority".into(),
        scheduler_reserve_full_isl: false,
        ..settings(4, 2, 16, 4, 32)
    })
    .unwrap();
    match run(&reqs, &cfg, Options::default()) {
        Err(Error::InvalidArgument { name: "requests", value, accepted }) => {
            assert_eq!(value, "0, 1");
            assert!(accepted.contains("preempt one another forever"), "{accepted}");
        }
        other => panic!("{other:?}"),
    }
    let fcfs = Config { policy: Policy::Fcfs, ..cfg };
    assert!(run(&reqs, &fcfs, Options::default()).is_ok());
}

#[test]
fn srpt_admits_the_shortest_predicted_first_and_preempts_the_longest() {
    // One request runs at a time: the two waiting behind request 0 are admitted by their
    // predicted length, not their arrival (request 2, predicted shorter, first).
    let reqs = Requests {
        arrival: &[0.0, 0.0, 0.0],
        prompt_len: &[4, 4, 4],
        output_len: &[3, 3, 3],
        predicted: &[1, 9, 2],
        ..Requests::default()
    };
    let base = Settings { enable_prefix_caching: false, ..settings(100, 4, 64, 1, 64) };
    let cfg = Config::new(Settings { policy: "srpt".into(), ..base.clone() }).unwrap();
    let r = run(&reqs, &cfg, Options::default()).unwrap();
    assert!(r.admitted[0] < r.admitted[2] && r.admitted[2] < r.admitted[1], "{:?}", r.admitted);
    let fcfs = run(&reqs, &Config::new(base).unwrap(), Options::default()).unwrap();
    assert!(fcfs.admitted[1] < fcfs.admitted[2]);
    // Both pick the same victim rule apart from the key: under srpt the longest remaining goes.
    let reqs = Requests { predicted: &[9, 1, 5], ..reqs };
    let running = [0u32, 1, 2];
    let requests: Vec<vllm::request::Request> = (0..3)
        .map(|i| vllm::request::Request::new(i, 0.0, 0, 4, 3, reqs.predicted[i as usize] as u64, false, None))
        .collect();
    assert_eq!(Policy::Srpt.victim(&running, &requests), 0);
    assert_eq!(Policy::Fcfs.victim(&running, &requests), 2);
    // Ties (equal predictions and arrivals) fall to the largest index, not the first running.
    let tied: Vec<vllm::request::Request> =
        (0..3).map(|i| vllm::request::Request::new(i, 0.0, 0, 4, 3, 5, false, None)).collect();
    assert_eq!(Policy::Srpt.victim(&running, &tied), 2);
    assert_eq!(Policy::Priority { aging: 0.0 }.victim(&running, &tied), 0);
}

#[test]
fn mlfq_levels_grow_by_the_quantum_and_the_boost_is_an_event() {
    let m = vllm::policy::Mlfq { levels: 3, quantum: 4, growth: 2, boost: 10 };
    let levels: Vec<u64> = [0, 3, 4, 11, 12, 1000].iter().map(|&a| m.level(a)).collect();
    assert_eq!(levels, [0, 0, 1, 1, 2, 2]); // level 0 holds 4 tokens, level 1 the next 8
    let p = Policy::Mlfq(m);
    assert!(!p.boost_due(0) && p.boost_due(10) && p.boost_due(20) && !p.boost_due(15));
    assert_eq!((p.steps_to_boost(0), p.steps_to_boost(7), p.steps_to_boost(10)), (10, 3, 0));
    assert_eq!(Policy::Sjf.steps_to_boost(7), u64::MAX);
}

#[test]
fn bad_input_is_an_error_never_a_panic() {
    let good = Requests { arrival: &[0.0, 1.0], prompt_len: &[20, 30], output_len: &[5, 5], ..Requests::default() };
    let keys = [1, 2, 3, 4, 5];
    let good = Requests { keys: &keys, key_offsets: &[0, 2, 5], ..good };
    let cfg = config(100, 8, 64, 4, 64);
    assert!(run(&good, &cfg, Options::default()).is_ok());
    let bad = [
        Requests { prompt_len: &[-20, 30], ..good },
        Requests { prompt_len: &[0, 30], ..good },
        Requests { output_len: &[5, 1 << 40], ..good },
        Requests { output_len: &[5], ..good },
        Requests { arrival: &[0.0, f64::NAN], ..good },
        Requests { arrival: &[2.0, 1.0], ..good },
        Requests { arrival: &[-1.0, 1.0], ..good },
        Requests { priority: &[1], ..good },
        Requests { key_offsets: &[], ..good },
        Requests { key_offsets: &[0, 3, 5], ..good },
        Requests { key_offsets: &[0, i64::MIN, 5], ..good },
        Requests { key_offsets: &[0, 2, 7], ..good },
        Requests { output_len: &[5, 60], ..good }, // longer than max_model_len
        Requests { predicted: &[3], ..good },
        Requests { predicted: &[3, -1], ..good },
    ];
    for (i, reqs) in bad.iter().enumerate() {
        assert!(matches!(run(reqs, &cfg, Options::default()), Err(Error::InvalidArgument { .. })), "case {i}");
    }
    let too_small = config(3, 8, 64, 4, 64); // request 1 needs 5 blocks
    assert!(matches!(run(&good, &too_small, Options::default()), Err(Error::InvalidArgument { .. })));
    for (budget, seqs, chunked, policy) in [(64, 100, true, "fcfs"), (32, 4, false, "fcfs"), (64, 4, true, "lifo")] {
        let bad =
            Settings { enable_chunked_prefill: chunked, policy: policy.into(), ..settings(100, 8, budget, seqs, 64) };
        assert!(Config::new(bad).is_err());
    }
    assert!(Config::new(settings(100, 0, 64, 4, 64)).is_err());
    let p = Settings { policy: "mlfq".into(), ..settings(100, 8, 64, 4, 64) };
    for (name, bad) in [
        ("aging", Settings { aging: -1.0, ..p.clone() }),
        ("aging", Settings { aging: f64::NAN, ..p.clone() }),
        ("mlfq_levels", Settings { mlfq_levels: 0, ..p.clone() }),
        ("mlfq_levels", Settings { mlfq_levels: 65, ..p.clone() }),
        ("mlfq_quantum", Settings { mlfq_quantum: 0, ..p.clone() }),
        ("mlfq_growth", Settings { mlfq_growth: 0, ..p.clone() }),
        ("mlfq_boost", Settings { mlfq_boost: u64::MAX, ..p.clone() }),
    ] {
        assert!(matches!(Config::new(bad), Err(Error::InvalidArgument { name: n, .. }) if n == name), "{name}");
    }
    assert!(StepTime::new("cubic", &[1.0]).is_err() && StepTime::new("linear", &[1.0]).is_err());
    let negative = StepTime::new("linear", &[-1.0, 0.0, 0.0, 0.0]).unwrap();
    let result = simulate(&good, &cfg, &negative, Options::default(), &Cancel::new());
    assert!(matches!(result, Err(Error::InvalidArgument { name: "step_time", .. })));
}

// ------------------------------------------------------------------ preemption by swap (tests/serve/test_swap.py)

/// Four usable blocks of 4 tokens, two 8-token prompts: the second is preempted in step 1.
fn two_requests() -> Settings {
    Settings { enable_prefix_caching: false, scheduler_reserve_full_isl: false, ..settings(5, 4, 16, 2, 32) }
}

#[test]
fn a_swapped_request_comes_back_where_it_stopped() {
    // Request 1's 8 computed tokens fill 2 blocks of 16 bytes: 32 bytes out in step 1 and in
    // at its readmission in step 6, 0.5 s each at 64 B/s; it decodes at once on its return.
    let reqs = Requests { arrival: &[0.0, 0.0], prompt_len: &[8, 8], output_len: &[6, 2], ..Requests::default() };
    let one_second = StepTime::Linear([1.0, 0.0, 0.0, 0.0]);
    let swap = Settings {
        preemption: "swap".into(),
        swap_space: 64.0 / (1u64 << 30) as f64,
        kv_block_bytes: 16,
        swap_bandwidth: Some(64.0),
        ..two_requests()
    };
    for jump in [true, false] {
        let options = Options { record: true, jump, ..Options::default() };
        let r = simulate(&reqs, &Config::new(swap.clone()).unwrap(), &one_second, options, &Cancel::new()).unwrap();
        assert_eq!(r.swap_out_bytes, vec![0, 32, 0, 0, 0, 0, 0]);
        assert_eq!(r.swap_in_bytes, vec![0, 0, 0, 0, 0, 0, 32]);
        assert_eq!(r.duration, vec![1.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.5]);
        assert_eq!((r.finish.clone(), r.preemptions.clone()), (vec![6.5, 8.0], vec![0, 1]));
        assert_eq!(scheduled(&r, 6), vec![(1, 1)]);
        assert!(r.recomputed_tokens.iter().all(|&t| t == 0));
        // By recompute its 8 tokens are computed again, with its ninth.
        let again = simulate(&reqs, &Config::new(two_requests()).unwrap(), &one_second, options, &Cancel::new());
        let again = again.unwrap();
        assert_eq!((scheduled(&again, 6), again.recomputed_tokens[6]), (vec![(1, 9)], 8));
        // A host pool of one block cannot take its two: recompute.
        let full = Settings { swap_space: 16.0 / (1u64 << 30) as f64, ..swap.clone() };
        let full = simulate(&reqs, &Config::new(full).unwrap(), &one_second, options, &Cancel::new()).unwrap();
        assert_eq!(Run { jumped_steps: 0, ..full }, Run { jumped_steps: 0, ..again });
    }
}

#[test]
fn bad_swap_options_are_refused_with_the_argument_named() {
    let swap = Settings { preemption: "swap".into(), kv_block_bytes: 1024, ..settings(100, 8, 64, 4, 64) };
    for (name, bad) in [
        ("preemption", Settings { preemption: "drop".into(), ..swap.clone() }),
        ("swap_space", Settings { swap_space: -1.0, ..swap.clone() }),
        ("swap_space", Settings { swap_space: f64::INFINITY, ..swap.clone() }),
        ("link", Settings { link: "usb4".into(), ..swap.clone() }),
        ("swap_bandwidth", Settings { swap_bandwidth: Some(-1.0), ..swap.clone() }),
        ("swap_bandwidth", Settings { swap_bandwidth: Some(f64::NAN), ..swap.clone() }),
        ("swap_bandwidth", Settings { swap_bandwidth: Some(0.0), ..swap.clone() }),
        ("kv_block_bytes", Settings { kv_block_bytes: 0, ..swap.clone() }),
    ] {
        assert!(matches!(Config::new(bad), Err(Error::InvalidArgument { name: n, .. }) if n == name), "{name}");
    }
    let cfg = Config::new(Settings { swap_bandwidth: Some(f64::INFINITY), ..swap }).unwrap();
    assert_eq!(cfg.swap.map(|s| (s.host_blocks, s.seconds(1 << 40))), Some((4 << 20, 0.0)));
}

/// `n` requests of `len` prompt and output tokens, all arriving at 0: enough work that a run
/// only ends early if something stops it (the cancel tests of the engine, cluster and pools).
pub(crate) struct Flood {
    arrival: Vec<f64>,
    lengths: Vec<i64>,
}

impl Flood {
    pub(crate) fn new(n: usize, len: i64) -> Self {
        Flood { arrival: vec![0.0; n], lengths: vec![len; n] }
    }

    pub(crate) fn requests(&self) -> Requests<'_> {
        Requests { arrival: &self.arrival, prompt_len: &self.lengths, output_len: &self.lengths, ..Requests::default() }
    }
}

#[test]
fn a_raised_cancel_flag_stops_a_run() {
    let flood = Flood::new(20_000, 100);
    let reqs = flood.requests();
    let cfg = Config { enable_prefix_caching: false, ..config(10_000, 16, 8192, 256, 1024) };
    let result = simulate(&reqs, &cfg, &STEP, Options::default(), &Cancel::raised());
    assert_eq!(result, Err(Error::Interrupted));
}

// ------------------------------------------------------------------ step times (tests/serve/test_steptime.py)

#[test]
fn step_times_follow_steptime_py_operation_by_operation() {
    let b = Batch {
        num_seqs: 3,
        prefill_seqs: 1,
        prefill_tokens: 100,
        decode_seqs: 2,
        context_tokens: 500,
        attention_pairs: 5_000,
    };
    let linear = StepTime::new("linear", &[0.1, 0.3, 0.7, 0.013]).unwrap();
    assert_eq!(linear.seconds(&b), 0.1 + 0.3 * 100.0 + 0.7 * 2.0 + 0.013 * 500.0);
    // A mixture of experts: 1 - miss ** new, the power by squaring.
    let c = [1e-3, 1e14, 1e12, 2e10, 5e8, 1e6, 1e9, 2e8, 8.0, 0.75, 1e5, 1e-4, 1e-7];
    let roofline = StepTime::new("roofline", &c).unwrap();
    let new = 102.0;
    let touched = 8.0 * (1.0 - 0.75_f64.powi(102));
    let expected = 1e-3
        + f64::max((2e10 * new + 5e8 * 3.0) / 1e14, (1e9 + 2e8 * touched) / 1e12)
        + f64::max(1e6 * 5_000.0 / 1e14, 1e5 * 602.0 / 1e12)
        + (1e-4 + 1e-7 * new);
    assert!((roofline.seconds(&b) / expected - 1.0).abs() < 1e-12);
}

// ------------------------------------------------------------------ driven from outside

/// Two engines behind a round-robin router, driven by one event loop through
/// `add_request` / `next_event_time` / `step`: each serves its share exactly as a run of that
/// share alone.
#[test]
fn engines_driven_step_by_step_from_one_loop_equal_their_own_runs() {
    let mut rng = Rng(11);
    let n = 60;
    let mut arrival = Vec::new();
    let mut t = 0.0;
    for _ in 0..n {
        t += rng.below(8) as f64 * 0.5;
        arrival.push(t);
    }
    let prompt: Vec<i64> = (0..n).map(|_| 1 + rng.below(40) as i64).collect();
    let output: Vec<i64> = (0..n).map(|_| 1 + rng.below(30) as i64).collect();
    let cfg = Config { enable_prefix_caching: false, ..config(40, 4, 32, 4, 128) };
    let cancel = Cancel::new();
    let share = |k: usize| -> (Vec<f64>, Vec<i64>, Vec<i64>) {
        let pick = |v: &[i64]| (k..n).step_by(2).map(|i| v[i]).collect::<Vec<_>>();
        ((k..n).step_by(2).map(|i| arrival[i]).collect(), pick(&prompt), pick(&output))
    };
    let mut engines: Vec<Engine<'_, vllm::Scheduler<'_>>> =
        (0..2).map(|_| Engine::new(vllm::Scheduler::new(&cfg, n), &STEP, RECORD, &cancel, n)).collect();
    let mut next = 0;
    loop {
        // The next event: a step of some engine, or the next arrival.
        let step = engines
            .iter()
            .enumerate()
            .filter_map(|(k, e)| e.next_event_time().map(|t| (t, k)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let arrival_time = arrival.get(next).copied().unwrap_or(f64::INFINITY);
        match step {
            Some((t, k)) if t < arrival_time => {
                let e = &mut engines[k];
                e.next_arrival(Some(arrival_time));
                e.step(t).unwrap();
            }
            _ if next < n => {
                let e = &mut engines[next % 2];
                let index = e.num_requests() as u32;
                let request = NewRequest {
                    index,
                    arrival: arrival_time,
                    priority: 0,
                    prompt_len: prompt[next] as u64,
                    output_len: output[next] as u64,
                    predicted: output[next] as u64,
                    keys: None,
                    external: 0,
                };
                e.add_request(request).unwrap();
                next += 1;
            }
            _ => break,
        }
    }
    for (k, e) in engines.into_iter().enumerate() {
        let (a, p, o) = share(k);
        let alone = Requests { arrival: &a, prompt_len: &p, output_len: &o, ..Requests::default() };
        let expected = run(&alone, &cfg, RECORD).unwrap();
        assert_eq!(e.num_finished(), a.len());
        // The jump stops at the next arrival to either engine: it may take fewer steps at once.
        assert_eq!(Run { jumped_steps: 0, ..e.into_run() }, Run { jumped_steps: 0, ..expected });
    }
}

// ------------------------------------------------------------------ the fields and columns declared once (tests/serve/test_engines.py)

/// A settings source over a map of numbers, as the binding's dict is one over Python objects.
struct Numbers(std::collections::HashMap<&'static str, f64>);

impl fields::FieldSource for Numbers {
    type Error = String;
    fn u64(&self, name: &'static str) -> std::result::Result<u64, String> {
        self.0.get(name).map(|&v| v as u64).ok_or_else(|| name.to_string())
    }
    fn i64(&self, name: &'static str) -> std::result::Result<i64, String> {
        self.u64(name).map(|v| v as i64)
    }
    fn f64(&self, name: &'static str) -> std::result::Result<f64, String> {
        self.0.get(name).copied().ok_or_else(|| name.to_string())
    }
    fn bool(&self, name: &'static str) -> std::result::Result<bool, String> {
        self.f64(name).map(|v| v != 0.0)
    }
    fn string(&self, name: &'static str) -> std::result::Result<String, String> {
        self.f64(name).map(|_| "fcfs".to_string())
    }
    fn optional_u64(&self, name: &'static str) -> std::result::Result<Option<u64>, String> {
        self.u64(name).map(Some)
    }
    fn optional_f64(&self, name: &'static str) -> std::result::Result<Option<f64>, String> {
        self.f64(name).map(Some)
    }
    fn tiers(&self, name: &'static str) -> std::result::Result<Vec<TierSettings>, String> {
        self.f64(name).map(|_| Vec::new())
    }
    fn words(&self, name: &'static str) -> std::result::Result<Vec<u32>, String> {
        self.u64(name).map(|v| vec![v as u32])
    }
}

#[test]
fn the_settings_are_read_by_their_declared_names_in_order() {
    use fields::Fields;
    assert_eq!(vllm::CONFIG_FIELDS.len(), 28);
    assert_eq!(vllm::CONFIG_FIELDS[..3], ["num_blocks", "block_size", "max_num_batched_tokens"]);
    assert_eq!(sglang::CONFIG_FIELDS.last(), Some(&"random_seed"));
    // Every field but the Python-only ones is read, by name; the first missing stops the read.
    let mut numbers = Numbers(vllm::CONFIG_FIELDS.iter().map(|&n| (n, 64.0)).collect());
    numbers.0.insert("watermark", 0.0);
    let read = Settings::read(&numbers).unwrap();
    assert_eq!(
        (read.num_blocks, read.watermark, read.policy.as_str(), read.swap_bandwidth),
        (64, 0.0, "fcfs", Some(64.0))
    );
    for name in ["prediction", "prediction_seed"] {
        numbers.0.remove(name);
    }
    assert!(Settings::read(&numbers).is_ok());
    numbers.0.remove("block_size");
    numbers.0.remove("kv_tiers");
    assert_eq!(Settings::read(&numbers).err(), Some("block_size".to_string()));
    // The defaults are EngineConfig's, bar the pool's size, which has none.
    assert!(Config::new(Settings::default()).is_err());
    let cfg = Config::new(Settings { num_blocks: 100, ..Settings::default() }).unwrap();
    assert_eq!((cfg.block_size, cfg.max_num_seqs, cfg.policy, cfg.swap), (16, 1024, Policy::Fcfs, None));
    let sglang = sglang::Config::new(sglang::Settings { max_total_tokens: 4096, ..Default::default() }, false);
    assert_eq!(sglang.map(|c| (c.num_pages(), c.chunk_tokens)), Ok((4096, Some(8192))));
}

#[test]
fn a_runs_columns_are_taken_by_name_in_order() {
    let reqs = Requests { arrival: &[0.0, 0.5], prompt_len: &[6, 3], output_len: &[2, 4], ..Requests::default() };
    let mut r = run(&reqs, &config(20, 4, 16, 4, 64), RECORD).unwrap();
    let (steps, jumped) = (r.start.len(), r.jumped_steps);
    let columns = r.take_columns();
    let names: Vec<_> = columns.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, Run::COLUMNS);
    assert_eq!(Run::COLUMNS[..2], ["arrival", "admitted"]);
    assert_eq!(columns[0].1, fields::Column::F64(vec![0.0, 0.5]));
    assert!(matches!(&columns[7].1, fields::Column::F64(d) if d.len() == steps));
    // What is not a column stays, the columns are left empty.
    assert_eq!((r.jumped_steps, r.arrival.len(), r.record.is_some()), (jumped, 0, true));
    let record = r.record.as_mut().unwrap().take_columns();
    assert_eq!(record.iter().map(|(name, _)| *name).collect::<Vec<_>>(), Record::COLUMNS);
}
