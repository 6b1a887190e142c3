//! One request as SGLang's scheduler holds it (`python/osbench/serve/sglang/request.py: Req`,
//! after `managers/schedule_batch.py: Req`): its tokens, its outputs, its place in the radix
//! tree and its row of KV.

use crate::radix::tree::Handle;

/// A token id no other request and position has (`request.py: private_token`): prompt tokens
/// are below `2**62`, these above.
#[inline]
pub fn private_token(index: u32, position: u64) -> i64 {
    ((1u64 << 62) | (u64::from(index) << 31) | position) as i64
}

#[derive(Debug, Clone)]
pub struct Req {
    pub index: u32,
    pub arrival: f64,
    pub prompt_len: u64,
    pub max_new_tokens: u64,
    /// `origin_input_ids + output_ids`: the prompt, then each output token.
    pub fill: Vec<i64>,
    pub num_outputs: u64,
    /// Tokens whose KV this request has, from the tree or computed (`Req.prefix_len`).
    pub prefix_len: u64,
    /// `Req.num_matched_prefix_tokens`: the last match, capped one short of the fill.
    pub num_matched: u64,
    /// Where the tokens computed in the current prefill end (`Req.extend_end`).
    pub extend_end: u64,
    /// The tree node the last match ended at (`Req.last_node`).
    pub last_node: Option<Handle>,
    /// The node this request holds a lock on (`Req.lock`).
    pub lock: Option<Handle>,
    /// Leading tokens of its row that the tree owns.
    pub protected: u64,
    /// Tokens of its row with KV slots.
    pub alloc_len: u64,
    /// Tokens whose KV is computed.
    pub committed: u64,
    /// The most tokens its KV has held: below it, a token is computed again after a retraction.
    pub computed_high: u64,
    /// The scheduler's prefill-token counter when it last joined the queue (`hrrn`).
    pub arrival_processed_tokens: u64,
    /// Scratch flags of one scheduling pass.
    pub deprioritized: bool,
    pub chosen: bool,
    pub decoding: bool,
}

impl Req {
    pub fn new(index: u32, arrival: f64, prompt: Vec<i64>, max_new_tokens: u64) -> Req {
        Req {
            index,
            arrival,
            prompt_len: prompt.len() as u64,
            max_new_tokens,
            fill: prompt,
            num_outputs: 0,
            prefix_len: 0,
            num_matched: 0,
            extend_end: 0,
            last_node: None,
            lock: None,
            protected: 0,
            alloc_len: 0,
            committed: 0,
            computed_high: 0,
            arrival_processed_tokens: 0,
            deprioritized: false,
            chosen: false,
            decoding: false,
        }
    }

    /// `Req.update_finish_state`: the only stop modelled is `max_new_tokens`.
    #[inline]
    pub fn finished(&self) -> bool {
        self.num_outputs >= self.max_new_tokens
    }

    pub fn append_output(&mut self) {
        let position = self.fill.len() as u64;
        self.fill.push(private_token(self.index, position));
        self.num_outputs += 1;
    }

    /// `Req._compute_max_prefix_len`: a match stops one token short.
    #[inline]
    pub fn max_prefix_len(input_len: u64) -> u64 {
        input_len.saturating_sub(1)
    }

    #[inline]
    pub fn fill_len(&self) -> u64 {
        self.fill.len() as u64
    }
}
