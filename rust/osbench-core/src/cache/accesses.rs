//! One validated view of a trace's accesses: every length and value check done once, here, so
//! the replay loops, curves, streams and online caches trust what they are given.

use super::keys::MAX_IDS;
use super::policy::{check_cost, is_cost};
use crate::error::{check_len, invalid, Result};
use std::ops::Range;

/// The accesses of a trace as dense ids (`0..n_ids`), with what some replays also need: one
/// object size per access (capacity then counts bytes), one cost per access (the policies that
/// take costs), and each access's next use (offline policies). Built by [`Accesses::new`] and
/// the `with_*` methods, each of which checks what it adds.
#[derive(Debug, Clone, Copy)]
pub struct Accesses<'a> {
    ids: &'a [u32],
    n_ids: usize,
    sizes: Option<&'a [u64]>,
    costs: Option<&'a [f64]>,
    next_use: Option<&'a [u64]>,
    keys: Option<&'a [u64]>,
}

impl<'a> Accesses<'a> {
    /// Accesses to dense ids, each below `n_ids`.
    pub fn new(ids: &'a [u32], n_ids: usize) -> Result<Self> {
        if n_ids > MAX_IDS {
            return Err(invalid("n_ids", n_ids, format!("at most {MAX_IDS} distinct ids")));
        }
        if let Some(top) = ids.iter().copied().max() {
            if top as usize >= n_ids {
                return Err(invalid("ids", top, format!("ids below n_ids={n_ids}")));
            }
        }
        Ok(Accesses { ids, n_ids, sizes: None, costs: None, next_use: None, keys: None })
    }

    /// The view in one call, from the parts a caller has (each checked as its `with_*` does).
    pub fn from_parts(
        ids: &'a [u32],
        n_ids: usize,
        sizes: Option<&'a [u64]>,
        costs: Option<&'a [f64]>,
        next_use: Option<&'a [u64]>,
    ) -> Result<Self> {
        let mut a = Accesses::new(ids, n_ids)?;
        if let Some(sizes) = sizes {
            a = a.with_sizes(sizes)?;
        }
        if let Some(costs) = costs {
            a = a.with_costs(costs)?;
        }
        if let Some(next_use) = next_use {
            a = a.with_next_use(next_use)?;
        }
        Ok(a)
    }

    /// One object size per access, each positive (bytes, or any unit the capacity counts).
    pub fn with_sizes(self, sizes: &'a [u64]) -> Result<Self> {
        check_len("sizes", sizes.len(), self.ids.len(), "access")?;
        if let Some(i) = sizes.iter().position(|&s| s == 0) {
            return Err(invalid("sizes", format!("0 at access {i}"), "positive object sizes"));
        }
        Ok(Accesses { sizes: Some(sizes), ..self })
    }

    /// One cost per access, each finite and positive.
    pub fn with_costs(self, costs: &'a [f64]) -> Result<Self> {
        check_len("costs", costs.len(), self.ids.len(), "access")?;
        // A pass without early exit, which the compiler vectorises; the first bad cost is looked
        // for only when there is one.
        if !costs.iter().fold(true, |all, &c| all & is_cost(c)) {
            costs.iter().try_for_each(|&c| check_cost("costs", c))?;
        }
        Ok(Accesses { costs: Some(costs), ..self })
    }

    /// Each access's next use: the index of the next access to the same id, or
    /// [`NEVER`](super::NEVER) ([`keys::next_use`](super::keys::next_use) computes it).
    pub fn with_next_use(self, next_use: &'a [u64]) -> Result<Self> {
        check_len("next_use", next_use.len(), self.ids.len(), "access")?;
        Ok(Accesses { next_use: Some(next_use), ..self })
    }

    /// The trace's own key of each id (`n_ids` of them, id order): policies that hash keys as
    /// libCacheSim does read them ([`Policy::learn_keys`](super::policy::Policy::learn_keys)).
    pub fn with_keys(self, keys: &'a [u64]) -> Result<Self> {
        check_len("keys", keys.len(), self.n_ids, "id")?;
        Ok(Accesses { keys: Some(keys), ..self })
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    pub fn ids(&self) -> &'a [u32] {
        self.ids
    }
    pub fn n_ids(&self) -> usize {
        self.n_ids
    }
    pub fn sizes(&self) -> Option<&'a [u64]> {
        self.sizes
    }
    pub fn costs(&self) -> Option<&'a [f64]> {
        self.costs
    }
    pub fn next_use(&self) -> Option<&'a [u64]> {
        self.next_use
    }
    pub fn keys(&self) -> Option<&'a [u64]> {
        self.keys
    }

    /// Whether object sizes or costs come with the accesses (then no stack-distance curve).
    pub fn weighted(&self) -> bool {
        self.sizes.is_some() || self.costs.is_some()
    }

    /// Accesses `range` (within `0..len()`), with their sizes, costs and next uses.
    pub(super) fn part(&self, range: Range<usize>) -> Accesses<'a> {
        Accesses {
            ids: &self.ids[range.clone()],
            n_ids: self.n_ids,
            sizes: self.sizes.map(|v| &v[range.clone()]),
            costs: self.costs.map(|v| &v[range.clone()]),
            next_use: self.next_use.map(|v| &v[range.clone()]),
            keys: self.keys,
        }
    }
}
