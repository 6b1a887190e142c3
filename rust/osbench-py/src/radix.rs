//! Radix-tree prefix cache: the tree as a Python class, and replays of request streams.

use crate::arrays::{slice, Int64s};
use crate::errors::ToPyResult;
use crate::errors::{ArgumentError, ArgumentTypeError};
use crate::interrupt;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::error::invalid;
use osbench_core::radix::{self, Handle, Sequences, Stats, MODES};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The core's mode table: (name, the parameters it reads) a row.
    m.add("RADIX_MODES", MODES.map(|m| (m.name, m.reads.to_vec())).to_vec())?;
    m.add_class::<RadixTree>()?;
    m.add_class::<RadixNode>()?;
    m.add_function(wrap_pyfunction!(radix_replay, m)?)?;
    m.add_function(wrap_pyfunction!(radix_curve, m)?)?;
    Ok(())
}

/// Every tree gets its own id, so a node handle knows which tree it belongs to.
static NEXT_TREE_ID: AtomicU64 = AtomicU64::new(1);

/// Tokens: any sequence of ints, read by the one conversion path ([`Int64s`]).
fn token_ids<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Int64s<'py>> {
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(ArgumentTypeError::new_err(
            "tokens is not accepted: the native engine takes a sequence of integer tokens, got a str",
        ));
    }
    Int64s::extract(obj)?.ok_or_else(|| {
        ArgumentTypeError::new_err(
            "tokens is not accepted: the native engine takes integer tokens in [-2**63, 2**63) \
             (a list, tuple, array('q'), memoryview or integer numpy array); map words to ids with \
             osbench.radix.Vocabulary",
        )
    })
}

/// A handle to one node of a native radix tree. It knows its tree: another tree refuses it.
#[pyclass(module = "osbench._native", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RadixNode {
    tree_id: u64,
    index: u32,
    generation: u32,
}

#[pymethods]
impl RadixNode {
    fn __repr__(&self) -> String {
        format!("<radix node #{} of tree {}>", self.index, self.tree_id)
    }
}

/// The radix tree of SGLang's RadixCache, native. See osbench.radix.RadixCache.
#[pyclass(module = "osbench._native")]
pub struct RadixTree {
    tree: radix::RadixTree,
    id: u64,
}

type NodeTuple = (u32, i64, Vec<i64>, u64, u64, RadixNode);

impl RadixTree {
    fn wrap(&self, h: Handle) -> RadixNode {
        RadixNode { tree_id: self.id, index: h.index, generation: h.generation }
    }
    fn unwrap(&self, node: &RadixNode) -> PyResult<Handle> {
        if node.tree_id != self.id {
            return Err(ArgumentError::new_err(format!(
                "node={} is not accepted: it belongs to another tree",
                node.__repr__()
            )));
        }
        let h = Handle { index: node.index, generation: node.generation };
        self.tree.check(h).py_err()?;
        Ok(h)
    }
    fn tuple(&self, v: radix::NodeView) -> NodeTuple {
        let parent = if v.parent == radix::tree::ROOT { -1 } else { i64::from(v.parent) };
        let handle = self.wrap(self.tree.handle_of(v.index).unwrap_or(Handle { index: v.index, generation: 0 }));
        (v.index, parent, v.tokens, v.lock_ref, v.last_access, handle)
    }
}

#[pymethods]
impl RadixTree {
    #[new]
    #[pyo3(signature = (page_size=1))]
    fn new(page_size: usize) -> PyResult<Self> {
        let tree = radix::RadixTree::new(page_size).py_err()?;
        Ok(RadixTree { tree, id: NEXT_TREE_ID.fetch_add(1, Ordering::Relaxed) })
    }

    /// Insert tokens; returns the length of the prefix that was already cached.
    fn insert(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<u64> {
        let t = token_ids(tokens)?;
        Ok(self.tree.insert(t.as_slice()))
    }

    /// (matched length, node where the match ends).
    fn match_prefix(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<(u64, RadixNode)> {
        let t = token_ids(tokens)?;
        let (m, h) = self.tree.match_prefix(t.as_slice());
        Ok((m, self.wrap(h)))
    }

    fn lock(&mut self, node: &RadixNode) -> PyResult<()> {
        let h = self.unwrap(node)?;
        self.tree.lock(h).py_err()
    }

    fn unlock(&mut self, node: &RadixNode) -> PyResult<()> {
        let h = self.unwrap(node)?;
        self.tree.unlock(h).py_err()
    }

    fn evict(&mut self, num_tokens: u64) -> u64 {
        self.tree.evict(num_tokens)
    }

    fn root(&self) -> RadixNode {
        self.wrap(self.tree.root())
    }

    /// (index, parent index or -1, tokens, lock_ref, last_access, handle) of every node but the
    /// root, in preorder with children sorted by their tokens.
    fn nodes(&self) -> Vec<NodeTuple> {
        self.tree.nodes().into_iter().map(|v| self.tuple(v)).collect()
    }

    /// The same tuple for one node.
    fn node(&self, node: &RadixNode) -> PyResult<NodeTuple> {
        let h = self.unwrap(node)?;
        let v = self.tree.node(h).py_err()?;
        Ok(self.tuple(v))
    }

    fn parent(&self, node: &RadixNode) -> PyResult<Option<RadixNode>> {
        let h = self.unwrap(node)?;
        Ok(self.tree.parent(h).py_err()?.map(|p| self.wrap(p)))
    }

    fn owns(&self, node: &RadixNode) -> bool {
        node.tree_id == self.id
    }

    #[getter]
    fn page_size(&self) -> usize {
        self.tree.page_size()
    }
    #[getter]
    fn total_size(&self) -> u64 {
        self.tree.total_size()
    }
    #[getter]
    fn evictable_size(&self) -> u64 {
        self.tree.evictable_size()
    }
    #[getter]
    fn protected_size(&self) -> u64 {
        self.tree.protected_size()
    }
    #[getter]
    fn num_nodes(&self) -> usize {
        self.tree.num_nodes()
    }
    #[getter]
    fn clock(&self) -> u64 {
        self.tree.clock()
    }
    #[getter]
    fn evicted_nodes(&self) -> u64 {
        self.tree.evicted().0
    }
    #[getter]
    fn evicted_tokens(&self) -> u64 {
        self.tree.evicted().1
    }
}

/// The outputs of the requests, in the same layout as the prompts, when both arrays are given.
fn outputs<'a>(
    tokens: &'a Option<PyReadonlyArray1<'_, i64>>,
    offsets: &'a Option<PyReadonlyArray1<'_, i64>>,
) -> PyResult<Option<Sequences<'a>>> {
    match (tokens, offsets) {
        (Some(t), Some(o)) => {
            Ok(Some(Sequences::new("outputs", slice("output_tokens", t)?, slice("output_offsets", o)?).py_err()?))
        }
        (None, None) => Ok(None),
        _ => Err(ArgumentError::new_err("output_tokens and output_offsets go together")),
    }
}

type StatsTuple = (u64, u64, u64, u64, u64, u64, u64);

fn stats_tuple(s: Stats) -> StatsTuple {
    (s.requests, s.hit_tokens, s.total_tokens, s.stored_tokens, s.nodes, s.evicted_nodes, s.evicted_tokens)
}

/// Serve requests (prompt i = tokens[offsets[i]:offsets[i+1]]) in order through a fresh cache.
/// Returns (requests, hit_tokens, total_tokens, stored_tokens, nodes, evicted_nodes,
/// evicted_tokens) and, if asked, each request's hit tokens.
#[pyfunction]
#[pyo3(signature = (mode, tokens, offsets, capacity=None, page_size=1, output_tokens=None, output_offsets=None, per_request=false))]
#[allow(clippy::too_many_arguments)]
fn radix_replay<'py>(
    py: Python<'py>,
    mode: &str,
    tokens: PyReadonlyArray1<'py, i64>,
    offsets: PyReadonlyArray1<'py, i64>,
    capacity: Option<u64>,
    page_size: usize,
    output_tokens: Option<PyReadonlyArray1<'py, i64>>,
    output_offsets: Option<PyReadonlyArray1<'py, i64>>,
    per_request: bool,
) -> PyResult<(StatsTuple, Option<Bound<'py, PyArray1<u64>>>)> {
    let prompts = Sequences::new("requests", slice("tokens", &tokens)?, slice("offsets", &offsets)?).py_err()?;
    let outputs = outputs(&output_tokens, &output_offsets)?;
    let mut m = radix::new_mode(mode, capacity, page_size).py_err()?;
    let (stats, hits) = interrupt::run(py, "radix.replay", |cancel| {
        let mut hits = if per_request { vec![0u64; prompts.len()] } else { Vec::new() };
        let s = radix::replay(m.as_mut(), prompts, outputs, &mut hits, cancel)?;
        Ok((s, hits))
    })?;
    Ok((stats_tuple(stats), if per_request { Some(hits.into_pyarray(py)) } else { None }))
}

/// One replay per capacity (a negative capacity means unlimited), on `threads` threads.
/// Returns one stats tuple per capacity, as radix_replay.
#[pyfunction]
#[pyo3(signature = (mode, tokens, offsets, capacities, page_size=1, output_tokens=None, output_offsets=None, threads=None))]
#[allow(clippy::too_many_arguments)]
fn radix_curve<'py>(
    py: Python<'py>,
    mode: &str,
    tokens: PyReadonlyArray1<'py, i64>,
    offsets: PyReadonlyArray1<'py, i64>,
    capacities: PyReadonlyArray1<'py, i64>,
    page_size: usize,
    output_tokens: Option<PyReadonlyArray1<'py, i64>>,
    output_offsets: Option<PyReadonlyArray1<'py, i64>>,
    threads: Option<usize>,
) -> PyResult<Vec<StatsTuple>> {
    let prompts = Sequences::new("requests", slice("tokens", &tokens)?, slice("offsets", &offsets)?).py_err()?;
    let outputs = outputs(&output_tokens, &output_offsets)?;
    let caps: Vec<Option<u64>> = slice("capacities", &capacities)?.iter().map(|&c| u64::try_from(c).ok()).collect();
    if page_size == 0 {
        return Err(invalid("page_size", 0, "a positive number of tokens per page")).py_err();
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let stats = interrupt::run_on_worker(py, "radix.curve", |cancel| {
        radix::curve(mode, prompts, outputs, &caps, page_size, threads, cancel)
    })?;
    Ok(stats.into_iter().map(stats_tuple).collect())
}
