//! SGLang's prefill admission (`python/osbench/serve/sglang/adder.py`, after
//! `managers/schedule_policy.py: PrefillAdder` over `mem_cache/prefill_budget.py:
//! PrefillBudget`): the pool's free and evictable tokens less a reservation for the running
//! requests' expected outputs and this pass's admissions; the waiting queue is tried head
//! first, and the first request that does not fit ends the pass.

use super::kv::KvCache;
use super::policy::Policy;
use super::request::Req;
use crate::error::{internal, Result};

/// `schedule_policy.py: CLIP_MAX_NEW_TOKENS`: the most output tokens reserved for one request.
pub const CLIP_MAX_NEW_TOKENS: u64 = 4096;

/// `schedule_policy.py: AddReqResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddReqResult {
    Continue,
    NoToken,
    Other,
}

/// `schedule_policy.py: PrefillAdder` with its `PrefillBudget`.
#[derive(Debug)]
pub struct PrefillAdder {
    policy: Policy,
    page_size: i64,
    /// `shortest-prefill-first`'s cap on the continuing chunk.
    pub chunked_req_limit: Option<i64>,
    pub rem_input_tokens: i64,
    pub rem_chunk_tokens: Option<i64>,
    total_offset: f64,
    current_offset: f64,
    pub can_run_list: Vec<u32>,
    pub new_chunked_req: Option<u32>,
}

impl PrefillAdder {
    /// `running`: the running batch's requests (`max_new_tokens`, outputs so far);
    /// `num_mixed_decode_tokens`: with mixed chunks, the running requests that decode inside
    /// this prefill; `compensated_sum`: Python's `sum()` of floats is compensated (3.12 on).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kv_page_size: u64,
        running: impl Iterator<Item = (u64, u64)>,
        new_token_ratio: f64,
        max_prefill_tokens: u64,
        chunk_tokens: Option<u64>,
        num_mixed_decode_tokens: u64,
        policy: Policy,
        compensated_sum: bool,
    ) -> PrefillAdder {
        let mixed = num_mixed_decode_tokens as i64;
        // PrefillAdder.__init__: the running requests' expected outputs, summed as Python's
        // sum() sums them (_get_running_request_total_token_offset).
        let expected = python_sum(
            running.map(|(max_new, outputs)| {
                max_new.saturating_sub(outputs).min(CLIP_MAX_NEW_TOKENS) as f64 * new_token_ratio
            }),
            compensated_sum,
        );
        PrefillAdder {
            policy,
            page_size: kv_page_size as i64,
            chunked_req_limit: None,
            rem_input_tokens: max_prefill_tokens as i64 - mixed,
            rem_chunk_tokens: chunk_tokens.map(|c| c as i64 - mixed),
            total_offset: mixed as f64 + expected,
            current_offset: mixed as f64,
            can_run_list: Vec::new(),
            new_chunked_req: None,
        }
    }

    #[inline]
    fn available_and_evictable(kv: &KvCache) -> f64 {
        (kv.available_size() + kv.evictable_size()) as f64
    }

    #[inline]
    fn rem_total_tokens(&self, kv: &KvCache) -> f64 {
        Self::available_and_evictable(kv) - self.total_offset
    }

    #[inline]
    fn cur_rem_tokens(&self, kv: &KvCache) -> f64 {
        Self::available_and_evictable(kv) - self.current_offset
    }

    /// `PrefillBudget.reserve`: the pages now, one page for alignment, the output later.
    fn reserve(&mut self, extend_input_len: i64, max_new_tokens: u64) {
        let immediate = self.ceil_paged_tokens(extend_input_len) + self.page_size;
        self.total_offset += (immediate + max_new_tokens as i64) as f64;
        self.current_offset += immediate as f64;
    }

    #[inline]
    fn ceil_paged_tokens(&self, tokens: i64) -> i64 {
        (tokens + self.page_size - 1).div_euclid(self.page_size) * self.page_size
    }

    /// `budget_state`: out of memory, out of prefill tokens, or room for more.
    pub fn budget_state(&self, kv: &KvCache) -> AddReqResult {
        if !(self.rem_total_tokens(kv) > 0.0 && self.cur_rem_tokens(kv) > 0.0) {
            return AddReqResult::NoToken;
        }
        if self.rem_input_tokens <= 0 || self.rem_chunk_tokens.is_some_and(|c| c <= 0) {
            return AddReqResult::Other;
        }
        AddReqResult::Continue
    }

    /// `_update_prefill_budget`: the page-ceiled extend comes off every budget.
    fn update_prefill_budget(&mut self, extend_input_len: i64, max_new_tokens: u64) {
        let extend = self.ceil_paged_tokens(extend_input_len);
        self.reserve(extend, max_new_tokens);
        self.rem_input_tokens -= extend;
        if let Some(c) = self.rem_chunk_tokens.as_mut() {
            *c -= extend;
        }
    }

    /// `add_chunked_req`: the next chunk of the request being chunked, as much as the chunk
    /// budget and the memory allow (`PrefillBudget.available_chunk_tokens`). True while it is
    /// still unfinished.
    pub fn add_chunked_req(&mut self, kv: &KvCache, r: &mut Req) -> Result<bool> {
        let Some(chunk) = self.rem_chunk_tokens else {
            return Err(internal("a chunked request without a chunk budget"));
        };
        // int(rem_total_tokens) truncates toward zero.
        let available = chunk.min(self.rem_total_tokens(kv).trunc() as i64);
        let mut rem_tokens = if available > 0 { available } else { chunk };
        if let Some(limit) = self.chunked_req_limit {
            rem_tokens = rem_tokens.min(limit);
        }
        let extend = r.fill_len() as i64 - r.prefix_len as i64;
        let truncated = extend > rem_tokens;
        let new_len = extend.min(rem_tokens);
        r.extend_end = (r.prefix_len as i64 + new_len) as u64;
        self.can_run_list.push(r.index);
        let max_new = if truncated { 0 } else { r.max_new_tokens.min(CLIP_MAX_NEW_TOKENS) };
        self.update_prefill_budget(new_len, max_new);
        Ok(truncated)
    }

    /// `add_one_req` (`_select_prefill_admission`, `_commit_prefill_admission`): admit `r`
    /// whole, or as the one chunked request when it is over the chunk budget (page-aligned), if
    /// `extend + min(remaining output, 4096) + page_size` is below what the budget has left
    /// with the request's own prefix locked.
    pub fn add_one_req(&mut self, kv: &mut KvCache, r: &mut Req, has_chunked_req: bool) -> Result<AddReqResult> {
        let max_new = r.max_new_tokens.saturating_sub(r.num_outputs).min(CLIP_MAX_NEW_TOKENS) as i64;
        let prefix_len = r.prefix_len as i64;
        let mut extend_len = r.fill_len() as i64 - prefix_len;
        let total_tokens = extend_len + max_new + self.page_size;
        let input_tokens = self.ceil_paged_tokens(extend_len);
        let Some(node) = r.last_node else { return Err(internal("a waiting request with no match")) };
        kv.tree.lock(node)?; // _lock_node: its prefix is not evictable while it is weighed
        let result = (|| -> Result<Option<AddReqResult>> {
            if (total_tokens as f64) >= self.rem_total_tokens(kv) {
                return Ok(Some(AddReqResult::NoToken)); // PrefillBudget.check_prefill
            }
            if self.rem_chunk_tokens.is_none() && !self.can_run_list.is_empty() && input_tokens >= self.rem_input_tokens
            {
                return Ok(Some(AddReqResult::Other)); // without chunking only the first may exceed
            }
            let mut is_chunked = false;
            let mut max_new_tokens = r.max_new_tokens.min(CLIP_MAX_NEW_TOKENS);
            if let Some(chunk) = self.rem_chunk_tokens {
                if input_tokens > chunk {
                    if has_chunked_req && self.policy == Policy::ShortestPrefillFirst {
                        return Ok(Some(AddReqResult::Other)); // one chunked request at a time
                    }
                    let page = self.page_size;
                    extend_len = chunk.div_euclid(page) * page;
                    let end = (prefix_len + extend_len).div_euclid(page) * page;
                    extend_len = end - prefix_len;
                    if extend_len <= 0 {
                        return Ok(Some(AddReqResult::Other));
                    }
                    is_chunked = true;
                    max_new_tokens = 0;
                }
            }
            // _commit_prefill_admission
            r.extend_end = (prefix_len + extend_len) as u64;
            kv.lock(r, node)?;
            self.can_run_list.push(r.index);
            if is_chunked {
                self.new_chunked_req = Some(r.index);
            }
            self.update_prefill_budget(extend_len, max_new_tokens);
            Ok(None)
        })();
        kv.tree.unlock(node)?;
        Ok(match result? {
            Some(res) => res,
            None => self.budget_state(kv),
        })
    }
}

/// Python's `sum()` of floats from its default start 0, as CPython computes it: one after the
/// other before 3.12; from 3.12 with Neumaier's compensation (`bltinmodule.c: builtin_sum_impl`:
/// the first float replaces the int 0, the others are added with the running compensation `c`,
/// which is added at the end when it is non-zero and finite).
pub fn python_sum(values: impl Iterator<Item = f64>, compensated: bool) -> f64 {
    let mut values = values;
    let Some(first) = values.next() else { return 0.0 };
    let mut total = first;
    if !compensated {
        for x in values {
            total += x;
        }
        return total;
    }
    let mut c = 0.0f64;
    for x in values {
        let t = total + x;
        if total.abs() >= x.abs() {
            c += (total - t) + x;
        } else {
            c += (x - t) + total;
        }
        total = t;
    }
    if c != 0.0 && c.is_finite() {
        total += c;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::python_sum;

    #[test]
    fn python_sum_is_sequential_before_312_and_compensated_after() {
        let tenths = || std::iter::repeat_n(0.1, 10);
        // sum([0.1] * 10): 0.9999999999999999 before Python 3.12, 1.0 from 3.12 on.
        assert_eq!(python_sum(tenths(), false), 0.9999999999999999);
        assert_eq!(python_sum(tenths(), true), 1.0);
        assert_eq!(python_sum(std::iter::empty(), true), 0.0);
        assert_eq!(python_sum([1e100, 1.0, -1e100].into_iter(), true), 1.0);
    }
}
