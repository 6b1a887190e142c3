"""The shape of the code: no import cycle among osbench's Python modules, no module cycle in
the Rust core, and no late import hiding one.

Python: an edge A -> B for every import of B that runs when A is imported (the module body,
class bodies, ``if``/``try`` blocks; not function bodies, not ``if TYPE_CHECKING:`` blocks).
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.

Rust: an edge A -> B for every path from module A into module B (``use`` lines and paths in
code alike, through ``crate::`` or ``super::``), where neither module contains the other (a
module naturally uses its parent's types, and a parent declares its children).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "osbench"
CORE = ROOT / "rust" / "osbench-core" / "src"


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the directed graph as a path [a, b, ..., a], or [] if it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


# --- Python ----------------------------------------------------------------------------------


def python_modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: Iterable[ast.stmt], top: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """(import statement, whether it runs at import time) of a block, recursively."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, top
        elif isinstance(node, ast.If) and _is_type_checking(node):
            continue  # for annotations only: never runs
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _imports(node.body, False)
        else:  # class bodies, if/try/with/for blocks: they run with the module
            inner = [*getattr(node, "body", []), *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            inner += [s for h in getattr(node, "handlers", []) for s in h.body]
            yield from _imports([s for s in inner if isinstance(s, ast.stmt)], top)


def _targets(module: str, is_package: bool, node: ast.stmt, known: set[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        yield sub if sub in known else base


def known_modules() -> set[str]:
    """Every osbench module, the compiled ones (known by their stubs) included."""
    stubs = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in PACKAGE.rglob("*.pyi")}
    return set(python_modules()) | stubs


def _edges(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, ast.stmt, bool]]:
    """(osbench module imported, the statement, whether it runs at import time) of a module."""
    tree = ast.parse(path.read_text(), str(path))
    for node, top in _imports(tree.body, True):
        for target in _targets(module, path.name == "__init__.py", node, known):
            if target in known and target != module:
                yield target, node, top


def import_graph() -> dict[str, set[str]]:
    """Module -> the osbench modules it imports when it is imported."""
    known = known_modules()
    return {m: {t for t, _, top in _edges(m, path, known) if top} for m, path in python_modules().items()}


def test_no_python_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_import_graph_sees_what_it_must() -> None:
    graph = import_graph()
    assert "osbench.traces.trace" in graph["osbench.traces.formats.registry"]
    assert "osbench.sched.policies" in graph["osbench.sched"]
    assert "osbench.host.results" not in graph["osbench.host.tables"]  # for annotations only


def test_osbench_modules_are_imported_at_the_top() -> None:
    known = known_modules()
    late, below = [], []
    for module, path in python_modules().items():
        late += [f"{path.relative_to(ROOT)}:{node.lineno}" for _, node, top in _edges(module, path, known) if not top]
        if "noqa: E402" in path.read_text():
            below.append(str(path.relative_to(ROOT)))
    assert not late, "imports of osbench modules inside functions: " + ", ".join(late)
    assert not below, "imports below the code: " + ", ".join(below)


# --- Rust ------------------------------------------------------------------------------------


def rust_modules() -> dict[str, Path]:
    out = {}
    for path in CORE.rglob("*.rs"):
        parts = list(path.relative_to(CORE).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts.pop()
        out["::".join(["crate", *parts])] = path
    return out


def _code(text: str) -> str:
    """Rust source without comments and string literals (paths in them are not uses)."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def _expand(path: str) -> Iterator[str]:
    """``a::{b, c::{d, e}}`` -> ``a::b``, ``a::c::d``, ``a::c::e``."""
    brace = path.find("{")
    if brace < 0:
        yield path
        return
    head, inner = path[:brace], path[brace + 1 : path.rfind("}")]
    depth, start = 0, 0
    for i, ch in enumerate(inner + ","):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            item = inner[start:i].strip()
            start = i + 1
            if item:
                yield from _expand(head + item)


PATH = re.compile(r"\b(?:crate|super|self)(?:\s*::\s*(?:\w+|\{[^;]*?\}(?=\s*;)))+")


def rust_references(module: str, text: str) -> Iterator[str]:
    """The absolute paths (``crate::...``) that module ``module`` refers to."""
    for m in PATH.finditer(_code(text)):
        for path in _expand(re.sub(r"\s+", "", m.group(0))):
            parts = path.split("::")
            here = module.split("::")
            if parts[0] == "crate":
                yield "::".join(parts)
                continue
            base = here
            while parts and parts[0] in ("super", "self"):
                base = base[:-1] if parts.pop(0) == "super" else base
            yield "::".join(base + parts)


def rust_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules it refers to, neither containing the other."""
    known = set(sources)
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for module, text in sources.items():
        for ref in rust_references(module, text):
            parts = ref.split("::")
            target = next(("::".join(parts[:k]) for k in range(len(parts), 0, -1) if "::".join(parts[:k]) in known), "")
            related = target.startswith(module + "::") or module.startswith(target + "::") or target == module
            if target and not related:
                graph[module].add(target)
    return graph


def test_no_rust_module_cycle() -> None:
    graph = rust_graph({m: p.read_text() for m, p in rust_modules().items()})
    cycle = find_cycle(graph)
    assert not cycle, "module cycle in the core: " + " -> ".join(cycle)


def test_the_rust_graph_finds_a_cycle_through_super() -> None:
    # The shape the free list and the fits once had: each reaching into the other.
    sources = {
        "crate": "pub mod mem;",
        "crate::mem": "mod first; pub mod freelist;",
        "crate::mem::freelist": "fn allocate() { let i = super::first::pick(self, size); }",
        "crate::mem::first": "use super::freelist::FreeList;\n// super::nothing::here\n",
    }
    assert find_cycle(rust_graph(sources)) == ["crate::mem::first", "crate::mem::freelist", "crate::mem::first"]
    sources["crate::mem::first"] = "use crate::error::{invalid, Result};\nuse super::{Jobs, Params};"
    assert find_cycle(rust_graph(sources)) == []


# --- the serving engine's seams --------------------------------------------------------------

VLLM = "osbench.serve.vllm"

VLLM_USERS = {
    "osbench.serve": "KvTier and its media, the vLLM semantics' KV tiers, where users reach them",
    "osbench.serve.config": "EngineConfig under its old name, so that user code goes on working",
    "osbench.serve.reference": "the reference engine: vLLM's semantics under the shared loop, its rules stated",
    "osbench.serve.native": "the native engine's binding is vLLM's: it hands the core the predicted lengths "
    "drawn once in serve/vllm/prediction.py, as the reference gets them",
}
"""The modules outside ``serve/vllm/`` that may import from it, and why."""

VLLM_CONFIG_USERS = {
    "osbench.serve",
    "osbench.serve.native",
    "osbench.serve.source",
    "osbench.serve.validate",
}
"""The modules that still read vLLM's configuration by its neutral old name
(``osbench.serve.config``): this list may only shrink."""


def _importers(target: str) -> set[str]:
    graph = {m: {t for t, _, _ in _edges(m, path, known_modules())} for m, path in python_modules().items()}
    return {m for m, targets in graph.items() if any(t == target or t.startswith(target + ".") for t in targets)}


def test_no_module_outside_serve_vllm_imports_vllm_names() -> None:
    outside = {m for m in _importers(VLLM) if not (m == VLLM or m.startswith(VLLM + "."))}
    assert outside <= set(VLLM_USERS), f"modules reaching into {VLLM}: {sorted(outside - set(VLLM_USERS))}"
    neutral = {"osbench.serve.drive", "osbench.serve.engines", "osbench.serve.hashing", "osbench.serve.peers.sandbox"}
    assert not neutral & _importers("osbench.serve.config")
    assert _importers("osbench.serve.config") <= VLLM_CONFIG_USERS | set(VLLM_USERS)


def test_the_engine_loop_reaches_no_semantics_in_the_core() -> None:
    """Outside ``serve/vllm/`` only the table's row and ``simulate`` (``serve/mod.rs``) and the
    tests name vLLM's modules: the loop (engine.rs) and the seam (scheduler.rs) do not."""
    sources = {m: p.read_text() for m, p in rust_modules().items()}
    vllm = "crate::serve::vllm"
    reaching = {
        m
        for m, text in sources.items()
        if not m.startswith(vllm) and any(ref.startswith(vllm) for ref in rust_references(m, text))
    }
    assert "crate::serve::tests" in reaching  # the finder sees a use of vllm::block_pool
    assert reaching <= {"crate::serve", "crate::serve::tests"}, sorted(reaching)


def test_the_semantics_reach_one_another_nowhere_in_the_core() -> None:
    """Outside ``serve/sglang/`` only the table's row and ``simulate_sglang`` (``serve/mod.rs``)
    name SGLang's modules, and no semantics names another's: each is a folder behind the seam."""
    sources = {m: p.read_text() for m, p in rust_modules().items()}
    sglang, vllm = "crate::serve::sglang", "crate::serve::vllm"
    reaching = {
        m
        for m, text in sources.items()
        if not m.startswith(sglang) and any(ref.startswith(sglang) for ref in rust_references(m, text))
    }
    assert reaching <= {"crate::serve"}, sorted(reaching)
    inside = [m for m in sources if m.startswith(sglang)]
    assert len(inside) >= 6  # mod, config, request, kv, policy, adder, scheduler...
    scheduler = set(rust_references(sglang + "::scheduler", sources[sglang + "::scheduler"]))
    assert any(ref.startswith(sglang + "::kv") for ref in scheduler)  # the finder sees the folder's own uses
    assert not [m for m in inside if any(ref.startswith(vllm) for ref in rust_references(m, sources[m]))]
