//! A configuration's fields, declared once across the boundary, and the run's columns.
//!
//! [`settings!`] declares an engine's settings: one line a field (its name, the name of the
//! Python configuration's field and of the binding's dict key; its type; `EngineConfig`'s
//! default). From that line come the struct's field, its place in the exported list
//! ([`Fields::NAMES`], which `osbench.serve.ENGINES` gives Python and a test holds equal to
//! the Python class's fields) and its reading from a [`FieldSource`] (the binding implements
//! that once, for the dict Python passes). [`columns!`] does the same for a run's columns.
//!
//! Who checks what: user input is validated in Python, once, with the project's messages
//! (`EngineConfig.__post_init__`); the binding only reads the dict (the types it states, and
//! exactly the declared keys); each `Config::new` then checks again what the engine needs to
//! be safe (positive sizes, names it knows), so that no input, from Python or Rust, can make
//! the engine misbehave.

/// Where settings are read from, by field name, one typed getter a type: the binding
/// implements it once, for the Python dict of the configuration's fields.
pub trait FieldSource {
    type Error;
    fn u64(&self, name: &'static str) -> Result<u64, Self::Error>;
    fn i64(&self, name: &'static str) -> Result<i64, Self::Error>;
    fn f64(&self, name: &'static str) -> Result<f64, Self::Error>;
    fn bool(&self, name: &'static str) -> Result<bool, Self::Error>;
    fn string(&self, name: &'static str) -> Result<String, Self::Error>;
    /// None when the field holds None.
    fn optional_u64(&self, name: &'static str) -> Result<Option<u64>, Self::Error>;
    fn optional_f64(&self, name: &'static str) -> Result<Option<f64>, Self::Error>;
    /// vLLM's `kv_tiers`: `KvTier`s, their medium's figures filled in.
    fn tiers(&self, name: &'static str) -> Result<Vec<TierSettings>, Self::Error>;
    /// An int >= 0 of any size as Python's `random.seed` reads it: its 32-bit words, least
    /// significant first (`[0]` for 0; SGLang's `random_seed`).
    fn words(&self, name: &'static str) -> Result<Vec<u32>, Self::Error>;
}

/// One of vLLM's `kv_tiers` as given (`KvTier`'s resolved fields): capacity in GiB per GPU,
/// the eviction policy by name, bytes per second, seconds per load, and whether the policy
/// weighs each block's recompute cost. Here, not in `vllm::tiers` (which re-exports it), so
/// that this module depends on no semantics.
#[derive(Debug, Clone)]
pub struct TierSettings {
    pub gib: f64,
    pub policy: String,
    pub bandwidth: f64,
    pub latency: f64,
    pub costs: bool,
}

/// A field's type: how it is read from a [`FieldSource`].
pub trait Field: Sized {
    fn read<S: FieldSource + ?Sized>(source: &S, name: &'static str) -> Result<Self, S::Error>;
}

/// Each type below is read by the [`FieldSource`] getter written after it.
macro_rules! read_with {
    ($($ty:ty => $getter:ident),* $(,)?) => {
        $(impl Field for $ty {
            fn read<S: FieldSource + ?Sized>(source: &S, name: &'static str) -> Result<Self, S::Error> {
                source.$getter(name)
            }
        })*
    };
}

read_with! {
    u64 => u64,
    i64 => i64,
    f64 => f64,
    bool => bool,
    String => string,
    Option<u64> => optional_u64,
    Option<f64> => optional_f64,
    Vec<TierSettings> => tiers,
    Vec<u32> => words,
}

/// A field the dict holds that Python alone reads (vLLM's `prediction*`: the predictions are
/// drawn there, and the engine takes the drawn lengths). The core reads nothing for it, so
/// its value is never checked here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PythonOnly;

impl Field for PythonOnly {
    fn read<S: FieldSource + ?Sized>(_: &S, _: &'static str) -> Result<Self, S::Error> {
        Ok(PythonOnly)
    }
}

/// Settings declared with [`settings!`]: their field names, in order, and their reading.
pub trait Fields: Sized {
    /// The fields, in the order of the Python configuration class's.
    const NAMES: &'static [&'static str];
    /// Every field read from `source` by its name, in order (the first error stops it).
    fn read<S: FieldSource + ?Sized>(source: &S) -> Result<Self, S::Error>;
}

/// Declares a configuration's settings once:
///
/// ```text
/// settings! {
///     /// Docs.
///     pub struct Settings {
///         /// Docs.
///         name: Type = default,   // `= default` optional: the type's Default (0, false, None)
///     }
/// }
/// ```
///
/// generates `pub struct Settings` with a `pub name: Type` per line (deriving Debug and
/// Clone), `impl Default` with those defaults, and `impl Fields` ([`Fields::NAMES`]: the
/// names in order; [`Fields::read`]: each field read by its name from a [`FieldSource`]).
macro_rules! settings {
    (@default) => { Default::default() };
    (@default $default:expr) => { $default };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* $field:ident: $ty:ty $(= $default:expr)?, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $crate::serve::fields::settings!(@default $($default)?), )* }
            }
        }

        impl $crate::serve::fields::Fields for $name {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            fn read<S: $crate::serve::fields::FieldSource + ?Sized>(source: &S) -> std::result::Result<Self, S::Error> {
                use $crate::serve::fields::Field;
                Ok($name { $( $field: Field::read(source, stringify!($field))?, )* })
            }
        }
    };
}
pub(crate) use settings;

/// One column of a run, as the binding hands it to Python (an int64 or float64 array).
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Three counts a row (a `(rows, 3)` int64 array).
    Rows(Vec<[u64; 3]>),
}

impl From<Vec<f64>> for Column {
    fn from(v: Vec<f64>) -> Self {
        Column::F64(v)
    }
}

impl From<Vec<i64>> for Column {
    fn from(v: Vec<i64>) -> Self {
        Column::I64(v)
    }
}

impl From<Vec<[u64; 3]>> for Column {
    fn from(v: Vec<[u64; 3]>) -> Self {
        Column::Rows(v)
    }
}

/// Declares a struct of columns once:
///
/// ```text
/// columns! {
///     /// Docs.
///     pub struct Run {
///         /// Docs.
///         name: Vec<f64>,          // a column: Vec<f64>, Vec<i64> or Vec<[u64; 3]>
///     }
///     also {
///         name: Type,              // optional: fields that are not columns
///     }
/// }
/// ```
///
/// generates `pub struct Run` with a `pub` field per line (deriving Debug, Clone, Default,
/// PartialEq), `Run::COLUMNS` (the columns' names, in order) and `Run::take_columns`, which
/// takes every column out by name, in order, as a [`Column`] (leaving it empty and the other
/// fields as they are): the binding packs a run with one loop over it.
macro_rules! columns {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$column_meta:meta])* $column:ident: $ty:ty, )*
        }
        $( also { $( $(#[$other_meta:meta])* $other:ident: $other_ty:ty, )* } )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $( $(#[$column_meta])* pub $column: $ty, )*
            $($( $(#[$other_meta])* pub $other: $other_ty, )*)?
        }

        impl $name {
            /// The columns' names, in order.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($column)),*];

            /// Every column by name, in order, taken out (left empty).
            pub fn take_columns(&mut self) -> Vec<(&'static str, $crate::serve::fields::Column)> {
                vec![$( (stringify!($column), std::mem::take(&mut self.$column).into()) ),*]
            }
        }
    };
}
pub(crate) use columns;
