//! Prefix mode: the radix tree as a serving engine uses it (RadixAttention).
//!
//! Per request: match the prompt and lock the matched node (the request is running); make room
//! for the tokens it adds (its stored length minus the match) by evicting unlocked leaves;
//! insert what it stores; unlock; and if the request alone overflowed the capacity (it was
//! larger than everything evictable), evict back down to the capacity.

use super::{Mode, RadixTree};
use crate::error::Result;

pub struct PrefixMode {
    tree: RadixTree,
    capacity: Option<u64>,
}

impl PrefixMode {
    pub fn new(capacity: Option<u64>, page_size: usize) -> Result<PrefixMode> {
        Ok(PrefixMode { tree: RadixTree::new(page_size)?, capacity })
    }
    pub fn tree(&self) -> &RadixTree {
        &self.tree
    }
}

impl Mode for PrefixMode {
    fn serve(&mut self, prompt: &[i64], stored: &[i64]) -> u64 {
        let (hit, node) = self.tree.match_prefix(prompt);
        // The handle was just returned by this tree, so lock and unlock cannot fail.
        let _ = self.tree.lock(node);
        if let Some(cap) = self.capacity {
            let page = self.tree.page_size() as u64;
            let aligned = stored.len() as u64 / page * page;
            let need = aligned.saturating_sub(hit);
            let total = self.tree.total_size();
            if total + need > cap {
                self.tree.evict(total + need - cap);
            }
        }
        // Same effect as `insert(stored)`: the locked path already holds `hit` tokens of it.
        if self.tree.insert_after_match(node, hit, stored).is_err() {
            self.tree.insert(stored);
        }
        let _ = self.tree.unlock(node);
        if let Some(cap) = self.capacity {
            let total = self.tree.total_size();
            if total > cap {
                self.tree.evict(total - cap);
            }
        }
        hit
    }
    fn counters(&self) -> (u64, u64, u64, u64) {
        let (nodes, tokens) = self.tree.evicted();
        (self.tree.total_size(), self.tree.num_nodes() as u64, nodes, tokens)
    }
}
