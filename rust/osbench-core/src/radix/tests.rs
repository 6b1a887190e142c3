//! Core tests: golden facts (SGLang's example, the lecture's tree) and invariants. The
//! exhaustive native-vs-reference comparison lives in the Python tests (hypothesis).

use super::*;
use crate::cancel::Cancel;

fn words(s: &str, vocab: &mut Vec<String>) -> Vec<i64> {
    s.split_whitespace()
        .map(|w| match vocab.iter().position(|v| v == w) {
            Some(i) => i as i64,
            None => {
                vocab.push(w.to_string());
                (vocab.len() - 1) as i64
            }
        })
        .collect()
}

fn check_invariants(t: &RadixTree) {
    let nodes = t.nodes();
    let stored: u64 = nodes.iter().map(|n| n.tokens.len() as u64).sum();
    assert_eq!(stored, t.total_size());
    let protected: u64 = nodes.iter().filter(|n| n.lock_ref > 0).map(|n| n.tokens.len() as u64).sum();
    assert_eq!(protected, t.protected_size());
    assert_eq!(nodes.len(), t.num_nodes());
    for n in &nodes {
        assert!(!n.tokens.is_empty() && n.tokens.len() % t.page_size() == 0);
        if n.parent != tree::ROOT {
            let p = nodes.iter().find(|m| m.index == n.parent).unwrap();
            assert!(p.lock_ref >= n.lock_ref, "a parent holds at least its child's locks");
        }
    }
}

#[test]
fn sglang_example_insert_returns() {
    let mut t = RadixTree::new(1).unwrap();
    let got: Vec<u64> = [&[1, 2, 3][..], &[1, 2, 3], &[1, 2, 4, 5], &[1, 2, 4, 5, 6, 7], &[8, 9, 10, 11, 12]]
        .iter()
        .map(|s| t.insert(s))
        .collect();
    assert_eq!(got, vec![0, 3, 2, 4, 0]);
    assert_eq!(t.total_size(), 3 + 2 + 2 + 5);
    assert_eq!(t.num_nodes(), 5);
    check_invariants(&t);
}

#[test]
fn lecture_four_sentences() {
    let mut v = Vec::new();
    let sentences = [
        "you are a helpful assistant . what is paging ?",
        "you are a helpful assistant . what is a radix tree ?",
        "you are a helpful assistant . explain lru caching .",
        "you are a careful reviewer . check this code .",
    ];
    let mut t = RadixTree::new(1).unwrap();
    let mut total = 0;
    for s in sentences {
        let w = words(s, &mut v);
        total += w.len();
        t.insert(&w);
    }
    assert_eq!(total, 42);
    assert_eq!(t.total_size(), 25);
    assert_eq!(t.num_nodes(), 7);
    let q = words("you are a helpful assistant . what is caching ?", &mut v);
    let (m, node) = t.match_prefix(&q);
    assert_eq!(m, 8);
    assert_eq!(t.node(node).unwrap().tokens.len(), 2, "the match ends at the end of [what is]");
    check_invariants(&t);
}

#[test]
fn match_splits_and_returns_upper_part() {
    let mut t = RadixTree::new(1).unwrap();
    t.insert(&[1, 2, 3, 4, 5]);
    let (m, node) = t.match_prefix(&[1, 2, 3, 9]);
    assert_eq!(m, 3);
    assert_eq!(t.node(node).unwrap().tokens, vec![1, 2, 3]);
    assert_eq!(t.num_nodes(), 2);
    assert_eq!(t.total_size(), 5);
}

#[test]
fn locks_protect_paths_and_eviction_frees_leaves_lru_first() {
    let mut t = RadixTree::new(1).unwrap();
    t.insert(&[1, 2, 3]);
    t.insert(&[1, 2, 4, 5]);
    t.insert(&[7, 8]);
    let (_, a) = t.match_prefix(&[1, 2, 4, 5]);
    t.lock(a).unwrap();
    assert_eq!(t.protected_size(), 4);
    assert_eq!(t.evictable_size(), 3);
    // [3] was touched before [7, 8]: it goes first, then [7, 8]; the locked path stays.
    assert_eq!(t.evict(1), 1);
    assert_eq!(t.evict(100), 2);
    assert_eq!(t.total_size(), 4);
    assert_eq!(t.evict(100), 0);
    t.unlock(a).unwrap();
    assert!(t.unlock(a).is_err(), "unlocking an unlocked node is refused");
    assert_eq!(t.evict(100), 4);
    assert_eq!(t.num_nodes(), 0);
    assert!(t.lock(a).is_err(), "a handle to an evicted node is refused");
    check_invariants(&t);
}

#[test]
fn pages_cut_keys_and_key_children_by_first_page() {
    let mut t = RadixTree::new(2).unwrap();
    assert_eq!(t.insert(&[1, 2, 3, 4, 5]), 0);
    assert_eq!(t.total_size(), 4);
    // Same first token, different first page: a second child of the root.
    assert_eq!(t.insert(&[1, 9, 3, 4]), 0);
    assert_eq!(t.num_nodes(), 2);
    // Diverges inside the second page: only the first page matches.
    let (m, _) = t.match_prefix(&[1, 2, 3, 7]);
    assert_eq!(m, 2);
    assert_eq!(t.num_nodes(), 3);
    assert_eq!(t.insert(&[1, 9, 3, 4, 6, 6]), 4);
    check_invariants(&t);
    assert_eq!(t.evict(u64::MAX), 10);
    assert_eq!(t.num_nodes(), 0);
    assert!(RadixTree::new(0).is_err());
}

#[test]
fn replay_prefix_and_whole() {
    let cancel = Cancel::new();
    // Three turns of one conversation: each prompt extends the previous one.
    let tokens: Vec<i64> = [&[1, 2, 3][..], &[1, 2, 3, 4, 5], &[1, 2, 3, 4, 5, 6, 7]].concat();
    let offsets = [0, 3, 8, 15];
    let seqs = Sequences::new("requests", &tokens, &offsets).unwrap();
    let mut prefix = new_mode("prefix", None, 1).unwrap();
    let s = replay(prefix.as_mut(), seqs, None, &mut [], &cancel).unwrap();
    assert_eq!((s.hit_tokens, s.total_tokens, s.stored_tokens, s.nodes), (8, 15, 7, 3));
    let mut whole = new_mode("whole", None, 1).unwrap();
    let s = replay(whole.as_mut(), seqs, None, &mut [], &cancel).unwrap();
    assert_eq!(s.hit_tokens, 0);
    // A capacity smaller than a request still ends within capacity.
    let mut small = new_mode("prefix", Some(4), 1).unwrap();
    let s = replay(small.as_mut(), seqs, None, &mut [], &cancel).unwrap();
    assert!(s.stored_tokens <= 4);
    assert!(Sequences::new("requests", &tokens, &[0, 3, 2, 15]).is_err());
    assert!(Sequences::new("requests", &tokens, &[0, 3]).is_err());
    assert!(new_mode("nope", None, 1).is_err());
}

#[test]
fn insert_after_match_equals_insert() {
    // Two trees driven alike, one inserting by a full walk, one after its match.
    let seqs: Vec<Vec<i64>> = (0..200u64)
        .map(|i| {
            let x = i.wrapping_mul(2654435761) % 97;
            (0..(x % 13) as i64).map(|k| (k * (x as i64 % 3 + 1)) % 5).collect()
        })
        .collect();
    for page in [1usize, 2] {
        let mut a = RadixTree::new(page).unwrap();
        let mut b = RadixTree::new(page).unwrap();
        for (n, s) in seqs.iter().enumerate() {
            let (ma, ha) = a.match_prefix(s);
            let (mb, hb) = b.match_prefix(s);
            assert_eq!(ma, mb);
            let mut stored = s.clone();
            stored.extend([n as i64 % 4, 1]);
            assert_eq!(a.insert(&stored), b.insert_after_match(hb, mb, &stored).unwrap());
            let _ = ha;
            if n % 7 == 0 {
                assert_eq!(a.evict(5), b.evict(5));
            }
            assert_eq!(a.nodes(), b.nodes());
            assert_eq!(a.clock(), b.clock());
        }
        let (_, h) = b.match_prefix(&seqs[5]);
        assert!(b.insert_after_match(h, 999, &seqs[5]).is_err());
    }
}

#[test]
fn every_mode_in_the_table_replays_and_refuses_a_bad_value_of_what_it_reads() {
    let cancel = Cancel::new();
    let tokens = [1, 2, 3, 1, 2, 3];
    let seqs = Sequences::new("requests", &tokens, &[0, 3, 6]).unwrap();
    for info in &MODES {
        let mut m = new_mode(info.name, Some(10), 1).unwrap();
        // The same prompt twice: the second is a hit in every mode.
        assert_eq!(replay(m.as_mut(), seqs, None, &mut [], &cancel).unwrap().hit_tokens, 3, "{}", info.name);
        assert_eq!(new_mode(info.name, None, 0).is_err(), info.reads.contains(&PAGE_SIZE), "{}", info.name);
    }
}

#[test]
fn a_raised_flag_stops_a_replay_at_its_first_request() {
    let cancel = Cancel::raised();
    let tokens = [1, 2, 3];
    let seqs = Sequences::new("requests", &tokens, &[0, 3]).unwrap();
    for name in ["prefix", "whole"] {
        let mut m = new_mode(name, None, 1).unwrap();
        assert_eq!(replay(m.as_mut(), seqs, None, &mut [], &cancel).err(), Some(crate::Error::Interrupted), "{name}");
        assert_eq!(m.counters(), (0, 0, 0, 0), "{name}: nothing served");
    }
}

#[test]
fn long_sequences_share_only_their_common_pages() {
    // Prefixes are compared 64 tokens at a time, then token by token: two 100-token sequences
    // that part after 10, 64 or 70 tokens share exactly that much (cut to whole pages).
    let a: Vec<i64> = (0..100).collect();
    for split in [10usize, 64, 70] {
        let b: Vec<i64> = (0..100).map(|i| if i < split as i64 { i } else { 1000 + i }).collect();
        for page in [1usize, 4] {
            let mut t = RadixTree::new(page).unwrap();
            t.insert(&a);
            assert_eq!(t.match_prefix(&b).0, (split - split % page) as u64, "split {split}, page {page}");
            assert_eq!(t.insert(&b), (split - split % page) as u64, "split {split}, page {page}");
            check_invariants(&t);
        }
    }
}
