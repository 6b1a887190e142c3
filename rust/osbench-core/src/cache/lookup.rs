//! Looking the table up: a row by name, what a row refuses (capacities, options, accesses), and
//! building a policy from its row. One layer above the table, which knows nothing of this.

use super::accesses::Accesses;
use super::policies::{AnyPolicy, TABLE};
use super::policy::{Options, PolicyInfo};
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
    names(|p| p.reads.contains(&option))
}

pub fn costs_refused() -> crate::Error {
    invalid("costs", "given", format!("costs are taken by {} only", names(|p| p.takes_costs)))
}

impl PolicyInfo {
    /// Every option given must be one the policy reads.
    pub fn check_options(&self, options: Options) -> Result<()> {
        match options.given().find(|o| !self.reads.contains(o)) {
            Some(o) => Err(invalid(o, "true", format!("{o} is read by {} only, not by {}", readers(o), self.name))),
            None => Ok(()),
        }
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
    /// Build a policy by name, after checking the capacity and the options against its row.
    pub fn new(name: &str, capacity: u64, n_ids: usize, options: Options) -> Result<AnyPolicy> {
        let info = info(name)?;
        info.check_capacity("capacity", capacity)?;
        info.check_options(options)?;
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
