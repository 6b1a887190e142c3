//! The parameters some policies read (LRU-K's K, SLRU's segment count, W-TinyLFU's window...):
//! each declared once, in its policy's row of the table, as a [`Param`] (name, default, what it
//! accepts, one line of doc). [`Options`] carries the values a caller gives; the row resolves
//! them ([`PolicyInfo::resolve`](super::PolicyInfo::resolve)): a value the policy does not read
//! or does not accept is refused, the others get their defaults, and the policy's constructor
//! reads the resolved values by name.

use crate::error::{invalid, Result};
use std::fmt;

/// A parameter's value, as a caller gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Flag(bool),
    Int(i128),
    Real(f64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Spelled as Python spells them: the messages reach Python users.
        match *self {
            Value::Flag(true) => write!(f, "True"),
            Value::Flag(false) => write!(f, "False"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Real(v) if v.is_nan() => write!(f, "nan"),
            Value::Real(v) if v.is_infinite() => write!(f, "{}", if v > 0.0 { "inf" } else { "-inf" }),
            Value::Real(v) => write!(f, "{v:?}"),
        }
    }
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Accepts {
    /// True or False.
    Flag,
    /// An integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// A real number between `min` and `max`, each bound open (excluded) or closed; an integer
    /// is taken as the same real number.
    Real { min: f64, min_open: bool, max: f64, max_open: bool },
}

impl Accepts {
    /// The accepted values in words, for messages: "an integer from 1 to 64".
    pub fn describe(&self) -> String {
        match *self {
            Accepts::Flag => "True or False".to_string(),
            Accepts::Int { min, max } => format!("an integer from {min} to {max}"),
            Accepts::Real { min, min_open, max, max_open } => format!(
                "a number in {}{min}, {max}{}",
                if min_open { '(' } else { '[' },
                if max_open { ')' } else { ']' }
            ),
        }
    }

    /// `value` as this parameter holds it, if accepted.
    pub fn check(&self, value: Value) -> Option<Value> {
        match (*self, value) {
            (Accepts::Flag, Value::Flag(_)) => Some(value),
            (Accepts::Int { min, max }, Value::Int(v)) => (min as i128 <= v && v <= max as i128).then_some(value),
            (Accepts::Real { .. }, Value::Int(v)) => self.check(Value::Real(v as f64)),
            (Accepts::Real { min, min_open, max, max_open }, Value::Real(v)) => {
                let above = if min_open { v > min } else { v >= min };
                let below = if max_open { v < max } else { v <= max };
                (above && below).then_some(value)
            }
            _ => None,
        }
    }

    /// The kind of value, by the Python type that gives it: "flag", "int" or "real".
    pub fn kind(&self) -> &'static str {
        match self {
            Accepts::Flag => "flag",
            Accepts::Int { .. } => "int",
            Accepts::Real { .. } => "real",
        }
    }
}

/// One parameter of a policy, as its row of the table declares it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// The keyword users give, lower case.
    pub name: &'static str,
    pub default: Value,
    pub accepts: Accepts,
    /// What it sets, in a line (the source's name for it, where it has one).
    pub doc: &'static str,
}

impl Param {
    pub const fn flag(name: &'static str, default: bool, doc: &'static str) -> Param {
        Param { name, default: Value::Flag(default), accepts: Accepts::Flag, doc }
    }

    pub const fn int(name: &'static str, default: u64, min: u64, max: u64, doc: &'static str) -> Param {
        Param { name, default: Value::Int(default as i128), accepts: Accepts::Int { min, max }, doc }
    }

    /// A fraction strictly between 0 and 1.
    pub const fn fraction(name: &'static str, default: f64, doc: &'static str) -> Param {
        let accepts = Accepts::Real { min: 0.0, min_open: true, max: 1.0, max_open: true };
        Param { name, default: Value::Real(default), accepts, doc }
    }

    /// A positive real number up to `max` (included).
    pub const fn positive(name: &'static str, default: f64, max: f64, doc: &'static str) -> Param {
        let accepts = Accepts::Real { min: 0.0, min_open: true, max, max_open: false };
        Param { name, default: Value::Real(default), accepts, doc }
    }
}

/// The most parameter values one call gives (every policy reads fewer).
pub const MAX_OPTIONS: usize = 8;

/// Parameter values by name: those a caller gives, or, resolved against a policy's row, every
/// parameter the policy reads (the defaults filled in). Small and `Copy`, so each thread of a
/// grid and each policy takes its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    entries: [Option<(&'static str, Value)>; MAX_OPTIONS],
}

impl Options {
    /// No values.
    pub const fn new() -> Options {
        Options { entries: [None; MAX_OPTIONS] }
    }

    /// Give `name` the `value` (replacing an earlier one); refused beyond [`MAX_OPTIONS`] names.
    pub fn set(&mut self, name: &'static str, value: Value) -> Result<()> {
        let free = self.entries.iter().position(|e| e.is_none_or(|(n, _)| n == name));
        match free {
            Some(i) => {
                self.entries[i] = Some((name, value));
                Ok(())
            }
            None => Err(invalid(name, value, format!("at most {MAX_OPTIONS} parameters in one call"))),
        }
    }

    /// These options with `name` set to `value` (tests and built-in callers; see [`Options::set`]).
    pub fn with(mut self, name: &'static str, value: Value) -> Result<Options> {
        self.set(name, value)?;
        Ok(self)
    }

    /// The value given to `name`, if any.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.iter().find(|&(n, _)| n == name).map(|(_, v)| v)
    }

    /// Every (name, value), in the order they were set.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Value)> + '_ {
        self.entries.iter().flatten().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.entries[0].is_none()
    }

    /// A flag's value (false if not set: resolved options always have it).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some(Value::Flag(true)))
    }

    /// An integer's value (0 if not set: resolved options always have it).
    pub fn int(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Value::Int(v)) => u64::try_from(v).unwrap_or(0),
            _ => 0,
        }
    }

    /// A real number's value (0 if not set: resolved options always have it).
    pub fn real(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(Value::Real(v)) => v,
            Some(Value::Int(v)) => v as f64,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_checks_kinds_and_bounds() {
        let k = Accepts::Int { min: 1, max: 64 };
        assert_eq!(k.check(Value::Int(0)), None);
        assert_eq!(k.check(Value::Int(64)), Some(Value::Int(64)));
        assert_eq!(k.check(Value::Real(2.0)), None);
        assert_eq!(k.check(Value::Flag(true)), None);
        let w = Param::fraction("window", 0.01, "").accepts;
        assert_eq!(w.check(Value::Real(0.0)), None);
        assert_eq!(w.check(Value::Real(1.0)), None);
        assert_eq!(w.check(Value::Real(f64::NAN)), None);
        assert_eq!(w.check(Value::Real(0.5)), Some(Value::Real(0.5)));
        let r = Param::positive("ghost_ratio", 4.0, 64.0, "").accepts;
        assert_eq!(r.check(Value::Int(64)), Some(Value::Real(64.0)));
        assert_eq!(r.check(Value::Real(f64::INFINITY)), None);
        assert_eq!(w.describe(), "a number in (0, 1)");
        assert_eq!(k.describe(), "an integer from 1 to 64");
    }

    #[test]
    fn options_hold_a_value_per_name() {
        let mut o = Options::new();
        assert!(o.is_empty());
        o.set("k", Value::Int(3)).unwrap();
        o.set("k", Value::Int(4)).unwrap();
        assert_eq!((o.int("k"), o.iter().count()), (4, 1));
        for name in ["a", "b", "c", "d", "e", "f", "g"] {
            o.set(name, Value::Flag(true)).unwrap();
        }
        assert!(o.set("h", Value::Flag(true)).is_err());
        assert!(o.flag("a") && !o.flag("k") && o.real("k") == 4.0 && o.int("missing") == 0);
        assert_eq!(Value::Real(0.5).to_string(), "0.5");
        assert_eq!(Value::Flag(false).to_string(), "False");
    }
}
