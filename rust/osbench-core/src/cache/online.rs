//! Online caches: one access at a time, keyed by integers (Python's, in [-2**63, 2**64), where
//! -1 and 2**64-1 are different keys), each mapped once to a dense id by a [`KeyMap`].

use super::admission::{Admission, AnyFilter};
use super::keys::KeyMap;
use super::lookup::{costs_refused, info};
use super::policy::{check_cost, Gate, Options};
use super::AnyPolicy;
use crate::cancel::Cancel;
use crate::error::{invalid, Result};

/// The keys an online cache takes.
const KEYS: std::ops::RangeInclusive<i128> = (i64::MIN as i128)..=(u64::MAX as i128);

pub struct Online {
    map: KeyMap<i128>,
    policy: AnyPolicy,
    /// The admission filter the cache sits behind, if any.
    filter: Option<AnyFilter>,
    sizes: bool,
    costs: bool,
}

impl Online {
    /// A cache of `capacity` under an online `policy`. With `sizes`, capacity counts bytes and
    /// every access gives its object's size; with `costs` (the policies that take costs),
    /// every access gives its object's cost.
    pub fn new(policy: &str, capacity: u64, options: Options, sizes: bool, costs: bool) -> Result<Online> {
        Online::admitted(policy, capacity, options, None, sizes, costs)
    }

    /// [`Online::new`] behind an admission filter, if `admission` names one.
    pub fn admitted(
        policy: &str,
        capacity: u64,
        options: Options,
        admission: Option<&Admission>,
        sizes: bool,
        costs: bool,
    ) -> Result<Online> {
        let row = info(policy)?;
        if row.offline {
            return Err(invalid(
                "policy",
                format!("{policy:?}"),
                "an online policy: this one needs the future (each access's next use), so it has no online form; use replay()",
            ));
        }
        let policy = AnyPolicy::new(policy, capacity, 0, options)?;
        if costs && !row.takes_costs {
            return Err(costs_refused());
        }
        let filter = admission.map(|a| a.build(capacity, 0)).transpose()?;
        Ok(Online { map: KeyMap::with_capacity(1024), policy, filter, sizes, costs })
    }

    /// Access `key`; true on a hit. A miss inserts it. `size` is given exactly when the cache
    /// counts bytes, `cost` exactly when it takes costs; both are kept from the access that
    /// brings the object in. A refused access changes nothing.
    pub fn access(&mut self, key: i128, size: Option<u64>, cost: Option<f64>) -> Result<bool> {
        if !KEYS.contains(&key) {
            return Err(invalid("key", key, "an integer in [-2**63, 2**64); it is outside"));
        }
        match (self.sizes, size) {
            (true, None) => return Err(invalid("size", "missing", "a size on every access: the cache counts bytes")),
            (false, Some(s)) => return Err(invalid("size", s, "none: the cache counts objects")),
            (_, Some(0)) => return Err(invalid("size", 0, "a positive object size")),
            _ => {}
        }
        match (self.costs, cost) {
            (true, None) => return Err(invalid("cost", "missing", "a cost on every access: the cache takes costs")),
            (false, Some(c)) => return Err(invalid("cost", c, "none: the cache takes no costs")),
            (_, Some(c)) => check_cost("cost", c)?,
            _ => {}
        }
        let known = self.map.len();
        let id = self.map.id_of(key)?;
        if self.map.len() > known {
            // libCacheSim's object ids are 64-bit: a negative key is its two's complement.
            self.policy.learn_keys(id, &[key as u64]);
        }
        match &mut self.filter {
            None => self.policy.access(id, size, cost),
            Some(f) => self.policy.access_gated(id, size, cost, f),
        }
    }

    /// Whether the next access starts long work of its admission filter (AdaptSize's
    /// reconfiguration, most of a second over a million objects), which [`Online::prepare`]
    /// can do first with a cancel at hand.
    pub fn long_work_next(&self) -> bool {
        self.filter.as_ref().is_some_and(|f| f.light_accesses() == 0)
    }

    /// Do now, stopped by `cancel`, the long work the next access would do; that access's
    /// result is the same. Interrupted, the work is done again by the next call (or access).
    pub fn prepare(&mut self, cancel: &Cancel) -> Result<()> {
        match &mut self.filter {
            Some(f) if f.light_accesses() == 0 => f.prepare(cancel),
            _ => Ok(()),
        }
    }

    pub fn contains(&self, key: i128) -> bool {
        self.map.get(key).is_some_and(|id| self.policy.contains(id))
    }
    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.policy.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes held (with sizes), else objects held.
    pub fn used(&self) -> u64 {
        self.policy.used()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Value;

    /// An online cache's access that sets off AdaptSize's reconfiguration can have it done
    /// first, stopped by the cancel and taken up again, with the hits of an uninterrupted twin.
    #[test]
    fn adaptsize_long_work_is_prepared_under_a_cancel_with_the_same_hits() {
        let mut o = Options::new();
        o.set("reconf_interval", Value::Int(1000)).unwrap();
        let a = Admission::new("adaptsize", &o).unwrap();
        let make = || Online::admitted("lru", 100, Options::new(), Some(&a), true, false).unwrap();
        let (mut whole, mut stopped) = (make(), make());
        let mut prepared = 0;
        for i in 0..3000i128 {
            let key = i % 1700;
            if stopped.long_work_next() {
                assert_eq!(stopped.prepare(&Cancel::raised()), Err(crate::Error::Interrupted));
                assert!(stopped.long_work_next());
                stopped.prepare(&Cancel::new()).unwrap();
                assert!(!stopped.long_work_next());
                prepared += 1;
            }
            assert_eq!(whole.access(key, Some(10), None), stopped.access(key, Some(10), None), "access {i}");
        }
        assert_eq!(prepared, 3); // one per reconf_interval of accesses
        assert_eq!(whole.used(), stopped.used());
    }
}
