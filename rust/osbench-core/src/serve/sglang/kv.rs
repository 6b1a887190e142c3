//! SGLang's KV memory (`python/osbench/serve/sglang/kv.py: KVCache`): the token pool
//! (`mem_cache/allocator/`) and the radix tree over it (`mem_cache/radix_cache.py:
//! RadixCache`), which is the core's [`RadixTree`] itself, the tree `osbench.radix` runs.
//!
//! The pool counts pages of `page_size` tokens: free, the tree's, or a running request's own.
//! A request's tree prefix is held by a lock on its last node; unlocked tree pages are
//! evictable, freed least recently used leaf first when an allocation is short.

use super::request::Req;
use crate::error::{internal, Result};
use crate::radix::tree::{Handle, RadixTree};

#[derive(Debug, Clone)]
pub struct KvCache {
    pub page_size: u64,
    pub num_pages: u64,
    pub free_pages: u64,
    pub tree: RadixTree,
}

impl KvCache {
    pub fn new(num_pages: u64, page_size: u64) -> Result<KvCache> {
        Ok(KvCache { page_size, num_pages, free_pages: num_pages, tree: RadixTree::new(page_size as usize)? })
    }

    /// Free tokens (`allocator/base.py: available_size`).
    #[inline]
    pub fn available_size(&self) -> u64 {
        self.free_pages * self.page_size
    }

    #[inline]
    pub fn evictable_size(&self) -> u64 {
        self.tree.evictable_size()
    }

    /// `allocator/base.py: evict_to_free_tokens`: evict the shortfall from the tree.
    pub fn evict_to_free_tokens(&mut self, num_tokens: u64) {
        let available = self.available_size();
        if num_tokens > available {
            self.free_pages += self.tree.evict(num_tokens - available) / self.page_size;
        }
    }

    /// Pages of the request's row that are its own (not the tree's).
    #[inline]
    pub fn own_pages(&self, r: &Req) -> u64 {
        ceil_pages(r.alloc_len, self.page_size) - r.protected / self.page_size
    }

    /// Slots for the request's tokens up to `end`; a new page only when its last page is full.
    pub fn allocate(&mut self, r: &mut Req, end: u64) -> Result<()> {
        let new = ceil_pages(end, self.page_size) - ceil_pages(r.alloc_len, self.page_size);
        if new > self.free_pages {
            return Err(internal(format!("the KV pool ran out of pages for request {}", r.index)));
        }
        self.free_pages -= new;
        r.alloc_len = end;
        Ok(())
    }

    /// `mem_cache/common.py: match_kv_cache`: the longest cached prefix of the fill (up to
    /// `limit` tokens) becomes the request's prefix.
    pub fn match_req(&mut self, r: &mut Req, limit: Option<u64>) {
        let end = limit.map_or(r.fill.len(), |l| (l as usize).min(r.fill.len()));
        let (len, node) = self.tree.match_prefix(&r.fill[..end]);
        r.prefix_len = len;
        r.last_node = Some(node);
        r.num_matched = len.min(Req::max_prefix_len(r.fill_len()));
    }

    /// `radix_cache.py: RadixCache.checkpoint`: insert the first `up_to` tokens (whole pages),
    /// free the pages the tree already had, insert the prompt apart from the output
    /// (`split_prompt`), and move the request's lock to the new last node.
    pub fn checkpoint(&mut self, r: &mut Req, up_to: u64) -> Result<()> {
        let page = self.page_size;
        let key_len = ((up_to - up_to % page) as usize).min(r.fill.len());
        let key = &r.fill[..key_len];
        let already = self.tree.insert(key);
        let prompt_key = (r.prompt_len / page * page) as usize;
        if 0 < prompt_key && prompt_key < key_len {
            self.tree.insert(&key[..prompt_key]);
        }
        if already > r.protected {
            self.free_pages += (already - r.protected) / page;
        }
        let (length, node) = self.tree.match_prefix(key);
        if length != key_len as u64 {
            return Err(internal(format!("request {}'s checkpoint matched {length} of {key_len} tokens", r.index)));
        }
        r.protected = key_len as u64;
        self.unlock(r)?;
        self.lock(r, node)?;
        r.last_node = Some(node);
        Ok(())
    }

    pub fn lock(&mut self, r: &mut Req, node: Handle) -> Result<()> {
        self.tree.lock(node)?;
        r.lock = Some(node);
        Ok(())
    }

    pub fn unlock(&mut self, r: &mut Req) -> Result<()> {
        if let Some(node) = r.lock.take() {
            self.tree.unlock(node)?;
        }
        Ok(())
    }

    /// `mem_cache/common.py: release_kv_cache`: with `checkpoint` the tree first keeps the
    /// computed tokens; the request's own pages are freed and its lock dropped.
    pub fn release(&mut self, r: &mut Req, checkpoint: bool) -> Result<()> {
        if checkpoint {
            let committed = r.committed;
            self.checkpoint(r, committed)?;
        }
        self.free_pages += self.own_pages(r);
        self.unlock(r)?;
        r.alloc_len = 0;
        r.protected = 0;
        r.committed = 0;
        Ok(())
    }

    /// Pages an allocation may take: the free ones and the tree's evictable ones.
    #[inline]
    pub fn reusable_pages(&self) -> u64 {
        self.free_pages + self.tree.evictable_size() / self.page_size
    }

    /// Pages the tree holds.
    #[inline]
    pub fn cached_pages(&self) -> u64 {
        self.tree.total_size() / self.page_size
    }
}

/// Pages holding `tokens` tokens (`config.py: ceil_pages`).
#[inline]
pub fn ceil_pages(tokens: u64, page_size: u64) -> u64 {
    tokens.div_ceil(page_size)
}
