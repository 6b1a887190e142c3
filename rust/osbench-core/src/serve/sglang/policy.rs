//! SGLang's queue policies (`python/osbench/serve/sglang/policy.py`, after
//! `managers/schedule_policy.py: SchedulePolicy.calc_priority`): the order in which the waiting
//! queue is tried, re-sorted in place before every prefill.

use super::kv::KvCache;
use super::random::PyRandom;
use super::request::Req;
use super::POLICIES;
use crate::error::{invalid, Result};
use crate::radix::tree::{Handle, MixBuild, RadixTree};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// `schedule_policy.py`: a request whose cached prefix is at most this long is checked against
/// the other waiting requests...
const IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD: u64 = 32;
/// ... and waits when it shares at least this many tokens with one before it.
const IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD: u64 = 32;
/// Above this many waiting requests `lpm` and `hrrn` sort nothing (`_determine_active_policy`).
const WAITING_QUEUE_PREFIX_MATCH_MAX: usize = 128;
const OPENING: usize = IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD as usize;
/// The first tokens of a fill that decide whether it shares enough with another.
type Opening = [i64; OPENING];
/// Every 32nd sort of a cache-agnostic policy refreshes the waiting prefixes in the tree.
const WAITING_PREFIX_REFRESH_INTERVAL: u64 = 32;

/// One of [`POLICIES`], by its place there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Fcfs,
    Lpm,
    Lof,
    Random,
    DfsWeight,
    Hrrn,
    ShortestPrefillFirst,
}

impl Policy {
    const ALL: [Policy; 7] = [
        Policy::Fcfs,
        Policy::Lpm,
        Policy::Lof,
        Policy::Random,
        Policy::DfsWeight,
        Policy::Hrrn,
        Policy::ShortestPrefillFirst,
    ];

    pub fn from_name(name: &str) -> Result<Policy> {
        match POLICIES.iter().position(|&p| p == name) {
            Some(i) => Ok(Policy::ALL[i]),
            None => Err(invalid("schedule_policy", format!("{name:?}"), format!("one of {}", POLICIES.join(", ")))),
        }
    }

    pub fn name(self) -> &'static str {
        POLICIES[Policy::ALL.iter().position(|&p| p == self).unwrap_or(0)]
    }

    /// The policies that match the waiting requests against the tree before sorting.
    fn cache_aware(self) -> bool {
        matches!(self, Policy::Lpm | Policy::DfsWeight | Policy::Hrrn | Policy::ShortestPrefillFirst)
    }
}

/// `schedule_policy.py: SchedulePolicy` over the radix cache (no priorities).
#[derive(Debug, Clone)]
pub struct SchedulePolicy {
    pub policy: Policy,
    rng: PyRandom,
    refresh_calls: u64,
    /// The openings of the waiting fills seen so far in one `_compute_prefix_matches`.
    scratch: HashSet<Opening, MixBuild>,
}

impl SchedulePolicy {
    pub fn new(policy: Policy, seed_words: &[u32]) -> SchedulePolicy {
        SchedulePolicy { policy, rng: PyRandom::new(seed_words), refresh_calls: 0, scratch: HashSet::default() }
    }

    /// `_determine_active_policy`.
    fn active_policy(&self, waiting: &[u32]) -> Policy {
        if matches!(self.policy, Policy::Lpm | Policy::Hrrn) && waiting.len() > WAITING_QUEUE_PREFIX_MATCH_MAX {
            Policy::Fcfs
        } else {
            self.policy
        }
    }

    /// `calc_priority`: sort `waiting` in place (stable sorts, as Python's).
    pub fn calc_priority(&mut self, waiting: &mut [u32], reqs: &mut [Req], kv: &mut KvCache, processed_tokens: u64) {
        let policy = self.active_policy(waiting);
        if self.policy == Policy::Fcfs {
        } else if policy.cache_aware() {
            compute_prefix_matches(waiting, reqs, kv, &mut self.scratch);
            match policy {
                // _sort_by_longest_prefix: the deprioritized ones last, all of one key
                // (`float("inf")`), so that they keep their order whatever they matched.
                Policy::Lpm => {
                    waiting.sort_by_key(|&i| {
                        let r = &reqs[i as usize];
                        (r.deprioritized, std::cmp::Reverse(if r.deprioritized { 0 } else { r.num_matched }))
                    });
                }
                Policy::Hrrn => {
                    waiting.sort_by(|&a, &b| {
                        let (ka, kb) = (
                            hrrn_key(&reqs[a as usize], processed_tokens),
                            hrrn_key(&reqs[b as usize], processed_tokens),
                        );
                        ka.0.partial_cmp(&kb.0).unwrap_or(Ordering::Equal).then(ka.1.cmp(&kb.1))
                    });
                }
                // _sort_by_shortest_prefill: the least uncached work first, then the first to queue.
                Policy::ShortestPrefillFirst => {
                    waiting.sort_by(|&a, &b| {
                        let (ra, rb) = (&reqs[a as usize], &reqs[b as usize]);
                        (ra.deprioritized, prefill_work(ra))
                            .cmp(&(rb.deprioritized, prefill_work(rb)))
                            .then(ra.arrival.partial_cmp(&rb.arrival).unwrap_or(Ordering::Equal))
                            .then(ra.index.cmp(&rb.index))
                    });
                }
                _ => dfs_weight_order(waiting, reqs, &kv.tree),
            }
        } else if policy == Policy::Lof {
            waiting.sort_by_key(|&i| std::cmp::Reverse(reqs[i as usize].max_new_tokens));
        } else if policy == Policy::Random {
            self.rng.shuffle(waiting);
        }
        self.touch_waiting_prefixes(policy, waiting, reqs, kv);
    }

    /// `_touch_waiting_prefixes`: under a cache-agnostic policy, on every 32nd sort (the first
    /// included), match the first 128 waiting requests' fills, the queue's head last.
    fn touch_waiting_prefixes(&mut self, policy: Policy, waiting: &[u32], reqs: &[Req], kv: &mut KvCache) {
        if policy.cache_aware() || waiting.is_empty() {
            return;
        }
        let refresh = self.refresh_calls % WAITING_PREFIX_REFRESH_INTERVAL == 0;
        self.refresh_calls += 1;
        if refresh {
            for &i in waiting[..waiting.len().min(WAITING_QUEUE_PREFIX_MATCH_MAX)].iter().rev() {
                kv.tree.match_prefix(&reqs[i as usize].fill);
            }
        }
    }
}

/// `_compute_prefix_matches`: match each waiting request's whole fill against the tree; one
/// with a short match sharing a long prefix with an earlier waiting one is deprioritized.
/// SGLang keeps the earlier ones in a scratch radix tree of page size 1
/// (`waiting_queue_radix_tree`) and asks it for the longest prefix it shares with any of them;
/// that is at least [`IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD`] tokens exactly when one
/// of them opens with the same that many tokens, so the first that many tokens of each are kept
/// instead (a fill shorter than that shares too little with anyone to matter).
fn compute_prefix_matches(
    waiting: &[u32],
    reqs: &mut [Req],
    kv: &mut KvCache,
    scratch: &mut HashSet<Opening, MixBuild>,
) {
    scratch.clear();
    for &i in waiting {
        let r = &mut reqs[i as usize];
        kv.match_req(r, None);
        r.deprioritized = false;
        if r.prefix_len <= IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD {
            let Some(opening) = r.fill.first_chunk::<OPENING>() else { continue };
            if scratch.contains(opening) {
                r.deprioritized = true;
            } else {
                scratch.insert(*opening);
            }
        }
    }
}

/// `_shortest_prefill_work`: the tokens left to prefill, at least one.
#[inline]
pub fn prefill_work(r: &Req) -> u64 {
    r.fill_len().saturating_sub(r.num_matched).max(1)
}

/// `SchedulePolicy.shortest_prefill_chunk_limit`: under `shortest-prefill-first`, the chunk of
/// the request being chunked leaves room for the shorter waiting requests (in queue order) that
/// fit in the budget less a page; None when it leaves none.
pub fn shortest_prefill_chunk_limit(
    policy: Policy,
    chunked: &Req,
    waiting: &[u32],
    reqs: &[Req],
    budget: i64,
    page: u64,
) -> Option<i64> {
    let page = page as i64;
    if policy != Policy::ShortestPrefillFirst || budget < 2 * page {
        return None;
    }
    let remaining = chunked.fill_len() as i64 - chunked.prefix_len as i64;
    let mut reserved = 0i64;
    for &i in waiting {
        let work = prefill_work(&reqs[i as usize]) as i64;
        let charge = (work + page - 1) / page * page;
        if work >= remaining || reserved + charge > budget - page {
            break;
        }
        reserved += charge;
    }
    if reserved == 0 {
        return None;
    }
    Some((budget - reserved).div_euclid(page) * page)
}

/// `_sort_by_hrrn`'s key: minus the response ratio (prefill tokens since the request joined the
/// queue over its uncached prompt tokens), nothing to prefill first, deprioritized last; ties
/// by index.
fn hrrn_key(r: &Req, processed_tokens: u64) -> (f64, u32) {
    if r.deprioritized {
        return (f64::INFINITY, r.index);
    }
    let uncached = r.prompt_len.saturating_sub(r.num_matched);
    if uncached == 0 {
        return (f64::NEG_INFINITY, r.index);
    }
    let waited = processed_tokens.saturating_sub(r.arrival_processed_tokens);
    (-(waited as f64 / uncached as f64), r.index)
}

/// `mem_cache/base_prefix_cache.py: _dfs_weight_order`: the waiting requests in depth-first
/// order of the tree, heavier subtrees (more waiting requests ending in them) first, children
/// in the order the tree keeps them ([`RadixTree::child_order`]), a node's children before its
/// own requests. Only the nodes on the paths to the requests' last nodes carry weight, so the
/// walk spans those.
fn dfs_weight_order(waiting: &mut [u32], reqs: &[Req], tree: &RadixTree) {
    let root = tree.root();
    // Per spanned node: the waiting requests ending there, its weight, its spanned children.
    let mut at: HashMap<Handle, (Vec<u32>, u64, Vec<Handle>)> = HashMap::new();
    for &i in waiting.iter() {
        let node = reqs[i as usize].last_node.unwrap_or(root);
        at.entry(node).or_default().0.push(i);
        let mut n = node;
        loop {
            at.entry(n).or_default().1 += 1;
            let Ok(Some(parent)) = tree.parent(n) else { break };
            let kids = &mut at.entry(parent).or_default().2;
            if !kids.contains(&n) {
                kids.push(n);
            }
            n = parent;
        }
    }
    let mut order = Vec::with_capacity(waiting.len());
    let mut stack: Vec<(Handle, bool)> = vec![(root, false)];
    while let Some((node, visited)) = stack.pop() {
        let Some((own, _, children)) = at.get(&node) else { continue };
        if visited {
            order.extend_from_slice(own);
            continue;
        }
        let mut kids: Vec<(u64, u64, Handle)> =
            children.iter().map(|&c| (at[&c].1, tree.child_order(c).unwrap_or(u64::MAX), c)).collect();
        kids.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        stack.push((node, true));
        stack.extend(kids.iter().rev().map(|&(_, _, c)| (c, false)));
    }
    waiting.copy_from_slice(&order);
}
