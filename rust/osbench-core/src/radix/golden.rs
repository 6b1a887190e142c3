//! Golden behaviour of the radix tree and the replay modes, with no Python involved: small
//! cases worked out by hand, and the totals of replays of a seeded request stream generated
//! here, recorded from the reference engine (`osbench.radix.reference`).
//! `tests/radix/test_core_golden.py` regenerates the stream in Python and checks every total
//! below against the reference engine again.

use super::*;
use crate::hash::SplitMix64;

fn tree(page: usize, seqs: &[&[i64]]) -> RadixTree {
    let mut t = RadixTree::new(page).unwrap();
    for s in seqs {
        t.insert(s);
    }
    t
}

/// (tokens, lock count) of every node, in the tree's canonical order.
fn shape(t: &RadixTree) -> Vec<(Vec<i64>, u64)> {
    t.nodes().into_iter().map(|n| (n.tokens, n.lock_ref)).collect()
}

/// (total, evictable, protected, nodes).
fn sizes(t: &RadixTree) -> (u64, u64, u64, usize) {
    (t.total_size(), t.evictable_size(), t.protected_size(), t.num_nodes())
}

#[test]
fn insert_splits_where_sequences_diverge() {
    let mut t = tree(1, &[&[1, 2, 3, 4]]);
    // [1, 2, 5] diverges after 2: [1, 2] above [3, 4] and the new leaf [5].
    assert_eq!(t.insert(&[1, 2, 5]), 2);
    assert_eq!(shape(&t), [(vec![1, 2], 0), (vec![3, 4], 0), (vec![5], 0)]);
    // A prefix of a node splits it too, and adds nothing.
    assert_eq!(t.insert(&[1]), 1);
    assert_eq!(shape(&t), [(vec![1], 0), (vec![2], 0), (vec![3, 4], 0), (vec![5], 0)]);
    assert_eq!(sizes(&t), (5, 5, 0, 4));
    // Inserting what is there adds nothing and returns its length.
    assert_eq!(t.insert(&[1, 2, 3, 4]), 4);
    assert_eq!(t.insert(&[]), 0);
    assert_eq!(sizes(&t), (5, 5, 0, 4));
}

#[test]
fn match_returns_the_upper_part_of_a_split_and_matches_nothing_on_a_new_first_token() {
    let mut t = tree(1, &[&[1, 2, 3, 4]]);
    let (m, h) = t.match_prefix(&[1, 2, 9]);
    assert_eq!((m, t.node(h).unwrap().tokens), (2, vec![1, 2]));
    assert_eq!(shape(&t), [(vec![1, 2], 0), (vec![3, 4], 0)]);
    let (m, h) = t.match_prefix(&[7, 1, 2]);
    assert_eq!((m, h), (0, t.root()));
    // A match of the whole node ends at it, without a split.
    let (m, h) = t.match_prefix(&[1, 2, 3, 4, 5]);
    assert_eq!((m, t.node(h).unwrap().tokens, t.num_nodes()), (4, vec![3, 4], 2));
}

#[test]
fn evict_frees_least_recently_used_leaves_whole_then_their_parents() {
    // [1, 2] with children [3, 4] (older) and [5]; [6] alone, the most recent.
    let mut t = tree(1, &[&[1, 2, 3, 4], &[1, 2, 5], &[6]]);
    // One token asked: the least recent leaf goes whole ([3, 4]: 2 tokens).
    assert_eq!(t.evict(1), 2);
    assert_eq!(shape(&t), [(vec![1, 2], 0), (vec![5], 0), (vec![6], 0)]);
    // Then [5]; its parent [1, 2] becomes a leaf, older than [6], and goes next.
    assert_eq!(t.evict(2), 3);
    assert_eq!(shape(&t), [(vec![6], 0)]);
    assert_eq!(t.evicted(), (3, 5));
    assert_eq!(t.evict(0), 0, "nothing asked, nothing freed");
}

#[test]
fn a_match_makes_its_path_recent() {
    let mut t = tree(1, &[&[1, 2, 3], &[4, 5]]);
    t.match_prefix(&[1, 2, 3]);
    // [4, 5] is now the least recent.
    assert_eq!(t.evict(1), 2);
    assert_eq!(shape(&t), [(vec![1, 2, 3], 0)]);
    // A match that splits stamps both parts: inserting [7] after it leaves [7] the most recent.
    let mut t = tree(1, &[&[1, 2, 3], &[4, 5]]);
    t.match_prefix(&[1, 9]);
    t.insert(&[7]);
    assert_eq!(t.evict(1), 2, "[4, 5], untouched since its insert, goes first");
    assert_eq!(t.evict(1), 2, "then [2, 3], the lower part of the split");
    assert_eq!(shape(&t), [(vec![1], 0), (vec![7], 0)]);
}

#[test]
fn locks_count_along_the_path_and_move_tokens_between_evictable_and_protected() {
    let mut t = tree(1, &[&[1, 2, 3, 4], &[1, 2, 5]]);
    let (_, leaf) = t.match_prefix(&[1, 2, 3, 4]);
    let (_, upper) = t.match_prefix(&[1, 2]);
    t.lock(leaf).unwrap();
    assert_eq!(sizes(&t), (5, 1, 4, 3));
    t.lock(upper).unwrap();
    assert_eq!(shape(&t), [(vec![1, 2], 2), (vec![3, 4], 1), (vec![5], 0)]);
    assert_eq!(sizes(&t), (5, 1, 4, 3), "a second lock moves nothing");
    // Only [5] may go; a locked parent stays even when its unlocked child is gone.
    assert_eq!(t.evict(100), 1);
    t.unlock(leaf).unwrap();
    assert_eq!(sizes(&t), (4, 2, 2, 2));
    assert_eq!(t.evict(100), 2, "[3, 4] goes; [1, 2] is still locked");
    t.unlock(upper).unwrap();
    assert_eq!(sizes(&t), (2, 2, 0, 1));
    assert!(t.unlock(upper).is_err());
    assert_eq!(sizes(&t), (2, 2, 0, 1), "a refused unlock changes nothing");
    assert!(t.lock(t.root()).is_ok() && t.unlock(t.root()).is_ok(), "the root may be named and holds nothing");
    assert_eq!(sizes(&t), (2, 2, 0, 1));
}

#[test]
fn pages_align_every_length() {
    let mut t = RadixTree::new(4).unwrap();
    // 10 tokens: 8 kept (two pages).
    assert_eq!(t.insert(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 0);
    assert_eq!(sizes(&t), (8, 8, 0, 1));
    // Diverging inside the second page matches the first page only, and splits there.
    let (m, h) = t.match_prefix(&[1, 2, 3, 4, 5, 6, 0, 0]);
    assert_eq!((m, t.node(h).unwrap().tokens), (4, vec![1, 2, 3, 4]));
    // Diverging inside the first page matches nothing.
    assert_eq!(t.match_prefix(&[1, 2, 3, 9]).0, 0);
    // Three tokens are less than a page: nothing is stored.
    assert_eq!(t.insert(&[5, 5, 5]), 0);
    assert_eq!(sizes(&t), (8, 8, 0, 2));
    // Same first token, different first page: a second child of the root.
    assert_eq!(t.insert(&[1, 2, 3, 0, 9, 9, 9, 9]), 0);
    assert_eq!(shape(&t), [(vec![1, 2, 3, 0, 9, 9, 9, 9], 0), (vec![1, 2, 3, 4], 0), (vec![5, 6, 7, 8], 0)]);
    assert_eq!(t.match_prefix(&[1, 2, 3, 0, 9, 9, 9, 9, 1]).0, 8);
    assert_eq!(t.match_prefix(&[1, 2, 3, 4, 5, 6, 7, 8]).0, 8);
}

#[test]
fn prefix_mode_evicts_to_make_room_but_never_the_running_request() {
    let mut m = PrefixMode::new(Some(6), 1).unwrap();
    assert_eq!(m.serve(&[1, 2, 3], &[1, 2, 3]), 0);
    assert_eq!(m.serve(&[4, 5, 6], &[4, 5, 6]), 0);
    // [1, 2, 3, 7] hits 3 and adds 1: the least recent other leaf ([4, 5, 6]) makes room.
    assert_eq!(m.serve(&[1, 2, 3, 7], &[1, 2, 3, 7]), 3);
    assert_eq!(m.counters(), (4, 2, 1, 3));
    // A request larger than the capacity: everything unlocked goes ([7], then [1, 2, 3]), the
    // request is stored whole, then evicted back down to the capacity once unlocked: nothing
    // is left.
    assert_eq!(m.serve(&[9; 8], &[9; 8]), 0);
    assert_eq!(m.counters(), (0, 0, 4, 15));
    assert_eq!(m.serve(&[], &[]), 0);
}

#[test]
fn whole_mode_hits_only_the_very_same_prompt_and_evicts_least_recent() {
    let mut m = WholeMode::new(Some(5));
    assert_eq!(m.serve(&[1, 2], &[]), 0);
    assert_eq!(m.serve(&[3, 4], &[]), 0);
    assert_eq!(m.serve(&[1, 2], &[]), 2);
    assert_eq!(m.serve(&[1], &[]), 0, "a prefix is not the same prompt");
    // 5 tokens held; [5, 6] evicts the least recent, [3, 4], then fits.
    assert_eq!(m.serve(&[5, 6], &[]), 0);
    assert_eq!(m.counters(), (5, 3, 1, 2));
    assert_eq!(m.serve(&[3, 4], &[]), 0);
    // A prompt longer than the capacity is never stored.
    assert_eq!(m.serve(&[7; 6], &[]), 0);
    assert_eq!(m.serve(&[7; 6], &[]), 0);
}

// ------------------------------------------------------------------ a seeded request stream

/// `n` requests in the shape of a chat service: one in eight repeats one of the last four
/// prompts exactly (a retry); the others either continue one of the last eight conversations
/// (its whole history, prompt and output, then 2 to 17 new tokens) or start a new one after
/// one of four 16-token system prompts (skewed to the first). Outputs are 1 to 8 tokens. New
/// tokens come from 50 values, so siblings often share first tokens. Returns (prompts, outputs).
pub(crate) fn golden_requests(seed: u64, n: usize) -> (Vec<Vec<i64>>, Vec<Vec<i64>>) {
    let mut rng = SplitMix64(seed);
    let systems: Vec<Vec<i64>> = (0..4).map(|s| (0..16).map(|i| s * 100 + i).collect()).collect();
    let mut open: Vec<Vec<i64>> = Vec::new();
    let (mut prompts, mut outputs): (Vec<Vec<i64>>, Vec<Vec<i64>>) = (Vec::new(), Vec::new());
    let token = |rng: &mut SplitMix64| 1000 + rng.below(50) as i64;
    for _ in 0..n {
        if !prompts.is_empty() && rng.below(8) == 0 {
            let back = rng.below(prompts.len().min(4) as u64) as usize;
            let prompt = prompts[prompts.len() - 1 - back].clone();
            let len = 1 + rng.below(8);
            outputs.push((0..len).map(|_| token(&mut rng)).collect());
            prompts.push(prompt);
            continue;
        }
        let mut prompt = if !open.is_empty() && rng.below(2) == 0 {
            let k = rng.below(open.len() as u64) as usize;
            open.remove(k)
        } else {
            let a = rng.below(4);
            let b = rng.below(4);
            systems[a.min(b) as usize].clone()
        };
        let extra = 2 + rng.below(16);
        prompt.extend((0..extra).map(|_| token(&mut rng)));
        let len = 1 + rng.below(8);
        let output: Vec<i64> = (0..len).map(|_| token(&mut rng)).collect();
        open.push([prompt.as_slice(), &output].concat());
        if open.len() > 8 {
            open.remove(0);
        }
        prompts.push(prompt);
        outputs.push(output);
    }
    (prompts, outputs)
}

/// Packed as the replay takes them: (tokens, offsets).
fn pack(seqs: &[Vec<i64>]) -> (Vec<i64>, Vec<i64>) {
    let mut offsets = vec![0];
    for s in seqs {
        offsets.push(offsets.last().unwrap() + s.len() as i64);
    }
    (seqs.concat(), offsets)
}

/// (mode, capacity, page size, outputs stored, [hit tokens, stored tokens, nodes, evicted
/// nodes, evicted tokens, Σ (i + 1) * hits of request i]).
type GoldenReplay = (&'static str, Option<u64>, usize, bool, [u64; 6]);

/// On `golden_requests(3, 300)`, from the reference engine.
const GOLDEN_REPLAYS: [GoldenReplay; 7] = [
    ("prefix", None, 1, false, [9206, 3129, 304, 0, 0, 1388400]),
    ("prefix", None, 4, true, [9528, 3696, 315, 0, 0, 1432308]),
    ("prefix", Some(300), 1, true, [9270, 298, 25, 316, 4137, 1381621]),
    ("prefix", Some(300), 4, false, [8740, 296, 23, 232, 2872, 1315828]),
    ("prefix", Some(120), 2, true, [5806, 78, 3, 346, 7660, 830050]),
    ("whole", None, 1, false, [1594, 10741, 267, 0, 0, 243507]),
    ("whole", Some(200), 1, false, [1290, 199, 5, 265, 10846, 205544]),
];

#[test]
fn the_golden_stream_shares_prefixes_and_repeats_prompts() {
    let (prompts, outputs) = golden_requests(3, 300);
    assert_eq!((prompts.len(), outputs.len()), (300, 300));
    assert_eq!(prompts.iter().map(Vec::len).sum::<usize>(), 12_335);
    assert_eq!(prompts.iter().map(Vec::len).max(), Some(120));
    let repeats = prompts.windows(2).filter(|w| w[0] == w[1]).count();
    assert!(repeats > 5, "{repeats}");
}

#[test]
fn golden_replays_equal_the_reference_engine() {
    let (prompts, outputs) = golden_requests(3, 300);
    let ((pt, po), (ot, oo)) = (pack(&prompts), pack(&outputs));
    let seqs = Sequences::new("prompts", &pt, &po).unwrap();
    let outs = Sequences::new("outputs", &ot, &oo).unwrap();
    let cancel = Cancel::new();
    for (mode, capacity, page, with_outputs, want) in GOLDEN_REPLAYS {
        let mut m = new_mode(mode, capacity, page).unwrap();
        let mut hits = vec![0; prompts.len()];
        let s = replay(m.as_mut(), seqs, with_outputs.then_some(outs), &mut hits, &cancel).unwrap();
        let weighted = hits.iter().enumerate().map(|(i, &h)| (i as u64 + 1) * h).sum::<u64>();
        let got = [s.hit_tokens, s.stored_tokens, s.nodes, s.evicted_nodes, s.evicted_tokens, weighted];
        assert_eq!(got, want, "{mode} {capacity:?} page {page} outputs {with_outputs}");
        assert_eq!((s.requests, s.total_tokens), (300, 12_335));
        assert_eq!(hits.iter().sum::<u64>(), s.hit_tokens);
        // The same capacities through the curve, on two threads.
        let c = curve(mode, seqs, with_outputs.then_some(outs), &[capacity], page, 2, &cancel).unwrap();
        assert_eq!(c, vec![s]);
    }
}

#[test]
fn handles_parents_and_refusals() {
    let mut t = tree(1, &[&[1, 2, 3], &[1, 2, 4]]);
    let (_, leaf) = t.match_prefix(&[1, 2, 3]);
    let parent = t.parent(leaf).unwrap().unwrap();
    assert_eq!(t.node(parent).unwrap().tokens, vec![1, 2]);
    assert_eq!(t.parent(parent).unwrap(), Some(t.root()));
    assert_eq!(t.parent(t.root()).unwrap(), None);
    assert_eq!(t.handle_of(leaf.index), Some(leaf));
    // Evicted ([4] touched since, so [3] is the least recent leaf): the handle is refused
    // everywhere, even once its slot is reused.
    t.match_prefix(&[1, 2, 4]);
    assert_eq!(t.evict(1), 1);
    assert_eq!(t.handle_of(leaf.index), None);
    let refused = "node=#";
    assert!(t.node(leaf).unwrap_err().to_string().starts_with(refused));
    assert!(t.parent(leaf).is_err() && t.lock(leaf).is_err() && t.unlock(leaf).is_err());
    t.insert(&[9, 9]);
    let (_, reused) = t.match_prefix(&[9, 9]);
    assert_eq!(reused.index, leaf.index, "the freed slot is reused");
    assert!(t.node(leaf).is_err() && t.node(reused).is_ok());
    // A match length that is not the path's is refused and changes nothing.
    let before = t.nodes();
    let (m, h) = t.match_prefix(&[1, 2, 4]);
    let clock = t.clock();
    assert!(t.insert_after_match(h, m + 1, &[1, 2, 4, 5]).is_err());
    assert!(t.insert_after_match(h, m, &[1, 2]).is_err(), "matched beyond the tokens");
    assert_eq!((t.clock(), t.nodes().len()), (clock, before.len()));
    assert_eq!(t.insert_after_match(h, m, &[1, 2, 4, 5]).unwrap(), 3);
    assert!(RadixTree::new(0).unwrap_err().to_string().starts_with("page_size=0 is not accepted"));
}

#[test]
fn sequences_and_replays_refuse_what_does_not_line_up() {
    let tokens = [1, 2, 3];
    let s = Sequences::new("prompts", &tokens, &[0, 1, 1, 3]).unwrap();
    assert_eq!((s.len(), s.is_empty(), s.get(0), s.get(1), s.get(2)), (3, false, &[1][..], &[][..], &[2, 3][..]));
    assert!(Sequences::new("prompts", &[], &[0]).unwrap().is_empty());
    for bad in [&[][..], &[1, 3], &[0, 2, 1, 3], &[0, 1, 2]] {
        let err = Sequences::new("prompts", &tokens, bad).unwrap_err().to_string();
        assert!(err.starts_with("prompts=offsets is not accepted"), "{bad:?}: {err}");
    }
    let cancel = Cancel::new();
    let one = Sequences::new("outputs", &tokens, &[0, 3]).unwrap();
    let mut m = new_mode("prefix", None, 1).unwrap();
    let err = replay(m.as_mut(), s, Some(one), &mut [], &cancel).unwrap_err().to_string();
    assert!(err.starts_with("outputs=1 sequences is not accepted: 3 sequences"), "{err}");
    assert!(replay(m.as_mut(), s, None, &mut [0; 2], &cancel).unwrap_err().to_string().starts_with("hits=2 entries"));
    let err = new_mode("lru", None, 1).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("mode=\"lru\" is not accepted: one of prefix, whole"), "{err}");
    let raised = Cancel::raised();
    assert_eq!(replay(m.as_mut(), s, None, &mut [], &raised), Err(crate::Error::Interrupted));
    assert_eq!(curve("whole", s, None, &[None, Some(2)], 1, 2, &raised), Err(crate::Error::Interrupted));
}
