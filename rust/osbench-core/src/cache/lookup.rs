//! Looking the table up: a row by name, what a row refuses (capacities, options, accesses), and
//! building a policy from its row. One layer above the table, which knows nothing of this.

use super::accesses::Accesses;
use super::params::{Options, Param};
use super::policies::{AnyPolicy, SEED, TABLE};
use super::policy::PolicyInfo;
use crate::error::{internal, invalid, Result};

/// The table's row for `name`, or an error listing the names.
pub fn info(name: &str) -> Result<&'static PolicyInfo> {
    TABLE
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| invalid("policy", format!("{name:?}"), format!("one of {}", names(|_| true))))
}

/// The names of the policies whose row passes `keep`, in table order.
fn names(keep: impl Fn(&PolicyInfo) -> bool) -> String {
    TABLE.iter().filter(|p| keep(p)).map(|p| p.name).collect::<Vec<_>>().join(", ")
}

fn readers(option: &str) -> String {
    names(|p| p.reads().any(|r| r == option))
}

/// The declaration of the parameter `name` (the first row that declares it), or an error
/// listing every parameter: how a caller outside the core turns a name into the table's.
pub fn parameter(name: &str) -> Result<&'static Param> {
    TABLE.iter().flat_map(|p| p.params).find(|p| p.name == name).ok_or_else(|| {
        let mut all: Vec<&str> = TABLE.iter().flat_map(|p| p.reads()).collect();
        all.sort_unstable();
        all.dedup();
        invalid("parameter", format!("{name:?}"), format!("one of the policies' parameters: {}", all.join(", ")))
    })
}

pub fn costs_refused() -> crate::Error {
    invalid("costs", "given", format!("costs are taken by {} only", names(|p| p.takes_costs)))
}

impl PolicyInfo {
    /// It draws random numbers, from its `seed` ([`SEED`]): the same seed gives the same misses
    /// in both engines, and its libCacheSim class (another generator) agrees with it in
    /// distribution only, never miss for miss.
    pub fn randomised(&self) -> bool {
        self.reads().any(|r| r == SEED.name)
    }

    /// The policy's parameters: those `given`, each one it reads and accepts, and the others at
    /// their defaults. A value it does not read, or does not accept, is refused.
    pub fn resolve(&self, given: &Options) -> Result<Options> {
        let mut resolved = self.defaults();
        for (name, value) in given.iter() {
            let Some(param) = self.params.iter().find(|p| p.name == name) else {
                let readers = readers(name);
                let who = if readers.is_empty() { "no policy".to_string() } else { format!("{readers} only") };
                return Err(invalid(name, value, format!("{name} is read by {who}, not by {}", self.name)));
            };
            let Some(value) = param.accepts.check(value) else {
                return Err(invalid(name, value, format!("{} for {}", param.accepts.describe(), self.name)));
            };
            resolved.set(param.name, value)?;
        }
        Ok(resolved)
    }

    /// What the policy needs and refuses of a trace's accesses: offline policies need the next
    /// uses, and only the policies that take costs are given costs.
    pub fn check_accesses(&self, accesses: &Accesses<'_>) -> Result<()> {
        if self.offline && accesses.next_use().is_none() {
            return Err(invalid(
                "next_use",
                "missing",
                format!("{} entries, one per access: {} needs each access's next use", accesses.len(), self.name),
            ));
        }
        if accesses.costs().is_some() && !self.takes_costs {
            return Err(costs_refused());
        }
        Ok(())
    }
}

impl AnyPolicy {
    /// Build a policy by name, after checking the capacity and the parameters against its row.
    pub fn new(name: &str, capacity: u64, n_ids: usize, given: Options) -> Result<AnyPolicy> {
        let info = info(name)?;
        let options = info.resolve(&given)?;
        info.check_capacity("capacity", capacity, &options)?;
        // A cache never holds more objects than there are ids, nor more than memory allows.
        let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
        AnyPolicy::build(info.name, capacity, n_ids, options)
            .ok_or_else(|| internal(format!("policy {name:?} is in the table but has no variant")))
    }

    /// The table's row for this policy.
    pub fn info(&self) -> &'static PolicyInfo {
        let name = self.name();
        // Every variant has its row (both come from the same line of the table).
        TABLE.iter().find(|p| p.name == name).unwrap_or(&TABLE[0])
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
