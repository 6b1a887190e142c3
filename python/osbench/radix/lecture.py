"""Lecture demo 05 (section 5: tries, radix trees and reference counting) and exercise 6.

``tables()`` computes every table; nothing here prints or writes files.

1. The four sentences, words as tokens: the radix tree drawn in the lecture (7 nodes, 42
   tokens, 25 stored) and the query that matches 8 tokens.
2. A synthetic multi-turn workload: tokens if every request is stored apart vs shared in
   the tree, and the node count (lecture: 402 requests, 53,632 vs 13,088 tokens, 407 nodes).
3. Reference counts: lock five running requests, evict as much as possible, their prefixes
   stay whole; unlock, evict the rest (lecture: 2,080 tokens, 1,584 freed, then 496).
4. Prefix cache vs whole-prompt cache, token hit ratio over capacities (lecture: whole 0%;
   prefix 63% at 500 tokens, 89% when large).
5. Exercise 6: what a new request can skip, and how the tree changes when it is inserted.
6. (Not quick, when the traces are present) Mooncake: block-level prefix hit ratio of a real
   production trace over capacities.
"""

from __future__ import annotations

from typing import Optional

from osbench import datasets
from osbench._table import Table
from osbench.radix import RadixCache, Requests, Vocabulary, conversations, curve, mooncake, replay

SENTENCES = (
    "you are a helpful assistant . what is paging ?",
    "you are a helpful assistant . what is a radix tree ?",
    "you are a helpful assistant . explain lru caching .",
    "you are a careful reviewer . check this code .",
)
QUERY = "you are a helpful assistant . what is caching ?"

LECTURE_DEMO2 = {"requests": 402, "per_request": 53_632, "shared": 13_088, "nodes": 407}
LECTURE_DEMO3 = {"total": 2_080, "freed_locked": 1_584, "freed_after": 496}
LECTURE_DEMO4 = {500: 0.63, None: 0.89}


def _drawing(t: RadixCache) -> list[list[object]]:
    return [[line.split("  length")[0], len(n.tokens)] for line, n in zip(t.pretty().splitlines(), t.nodes())]


def demo1_tree(engine: str = "native") -> Table:
    # Ids in alphabetical order of the words, so children appear in the lecture's order.
    vocab = Vocabulary(sorted({w for s in SENTENCES for w in s.split()} | set(QUERY.split())))
    t = RadixCache(engine=engine, vocab=vocab)
    rows: list[list[object]] = []
    for s in SENTENCES:
        cached = t.insert(s)
        rows.append([f"insert: {s}", len(s.split()), cached])
    m = t.match_prefix(QUERY)
    rows.append([f"match:  {QUERY}", len(QUERY.split()), m.length])
    total = sum(len(s.split()) for s in SENTENCES)
    return Table(
        title="05-1  Four sentences in a radix tree (words as tokens)",
        columns=["operation", "tokens", "already cached"],
        rows=rows + [["tree", "", ""]] + [[f"  {line}", length, ""] for line, length in _drawing(t)],
        note=(
            f"{total} tokens inserted, {t.total_size} stored, {t.num_nodes} nodes (lecture: 42, 25, 7). "
            f"The query walks {m.length} tokens down the tree (lecture: 8): their KV needs no prefill."
        ),
        key="05-1",
        extra={
            "total_tokens": total,
            "stored_tokens": t.total_size,
            "nodes": t.num_nodes,
            "query_match": m.length,
            "drawing": t.pretty(),
        },
    )


def demo2_sharing(engine: str = "native", seed: int = 0) -> Table:
    w = conversations(200, seed=seed)
    r = replay(w, None, engine=engine)
    ours = [
        len(w),
        w.total_tokens,
        r.stored_tokens,
        w.total_tokens / r.stored_tokens,
        r.nodes,
        r.stored_tokens / r.nodes,
    ]
    lec = LECTURE_DEMO2
    lecture = [
        lec["requests"],
        lec["per_request"],
        lec["shared"],
        lec["per_request"] / lec["shared"],
        lec["nodes"],
        lec["shared"] / lec["nodes"],
    ]
    return Table(
        title="05-2  Multi-turn conversations: tokens stored per request vs shared in the tree",
        columns=[
            "",
            "requests",
            "tokens, one copy per request",
            "tokens, shared prefixes",
            "saving (x)",
            "nodes",
            "tokens per node",
        ],
        rows=[["osbench", *ours], ["lecture", *lecture]],
        note=(
            "One system prompt, 4 apps with a few-shot block each, 200 conversations of 1-3 turns, each turn's prompt "
            "the whole history. Every request adds one leaf: nodes = requests + the shared trunk."
        ),
        key="05-2",
        setup=f"{len(w):,} requests of 200 conversations",
        seed=seed,
    )


def demo3_locks(engine: str = "native", seed: int = 0) -> Table:
    w = conversations(17, seed=seed)
    t = RadixCache(engine=engine)
    for i in range(len(w)):
        t.insert(list(w.prompt(i)) + list(w.output(i)))
    running = [w.prompt(i) for i in range(len(w) - 5, len(w))]
    rows: list[list[object]] = [["after serving the requests", t.total_size, t.evictable_size, t.protected_size, 0, ""]]
    matches = [t.match_prefix(p) for p in running]
    for m in matches:
        t.lock(m)
    rows.append(["lock the paths of 5 running requests", t.total_size, t.evictable_size, t.protected_size, 0, ""])
    freed_locked = t.evict(t.total_size)
    intact = sum(t.match_prefix(p).length == len(p) for p in running)
    rows.append(
        [
            "evict as much as possible",
            t.total_size,
            t.evictable_size,
            t.protected_size,
            freed_locked,
            f"{intact}/5 prefixes whole",
        ]
    )
    for m in matches:
        t.unlock(m)
    rows.append(["the 5 finish: unlock", t.total_size, t.evictable_size, t.protected_size, 0, ""])
    freed_after = t.evict(t.total_size)
    rows.append(["evict the rest", t.total_size, t.evictable_size, t.protected_size, freed_after, ""])
    lec = LECTURE_DEMO3
    return Table(
        title="05-3  Reference counts: running requests' prefixes cannot be evicted",
        columns=["step", "total", "evictable", "protected", "freed", "check"],
        rows=rows,
        note=(
            f"Lecture: {lec['total']:,} tokens, at most {lec['freed_locked']:,} freed while 5 requests run, the "
            f"other {lec['freed_after']:,} after they finish. Only unlocked leaves go, whole nodes, least recently "
            "used first; a parent whose last child went becomes a leaf."
        ),
        key="05-3",
        setup=f"{len(w):,} requests of 17 conversations, prompts and outputs",
        seed=seed,
        extra={"freed_locked": freed_locked, "freed_after": freed_after, "intact": intact},
    )


def demo4_prefix_vs_whole(engine: str = "native", seed: int = 1, quick: bool = False) -> Table:
    w = conversations(100 if quick else 400, seed=seed)
    caps: list[Optional[int]] = [100, 250, 500, 1_000, 2_000, 5_000, 10_000, None]
    whole = curve(w, caps, mode="whole", engine=engine)
    prompts_only = curve(w, caps, engine=engine)
    with_outputs = curve(w, caps, outputs=True, engine=engine)
    rows = []
    for c, a, b, d in zip(caps, whole, prompts_only, with_outputs):
        lec = LECTURE_DEMO4.get(c)
        rows.append(
            [
                "unlimited" if c is None else c,
                float(a),
                float(b),
                float(d),
                "" if lec is None else f"prefix {lec:.0%}, whole 0%",
            ]
        )
    return Table(
        title=f"05-4  Token hit ratio, prefix cache vs whole-prompt cache ({len(w)} requests)",
        columns=["capacity (tokens)", "whole prompt", "prefix (prompts)", "prefix (prompts + outputs)", "lecture"],
        rows=rows,
        note=(
            "Whole-prompt matching never hits: each turn's prompt is longer than the last. The prefix cache keeps the "
            "system prompt and few-shot blocks (reused by every request) even when tiny; when large, it also hits "
            "the history, and (storing outputs) the previous answers; what is left is each turn's new question."
        ),
        key="05-4",
        setup=f"{len(w):,} requests of {100 if quick else 400} conversations",
        seed=seed,
        extra={
            "curves": {
                "capacities": [None if c is None else int(c) for c in caps],
                "whole": [float(x) for x in whole],
                "prefix": [float(x) for x in prompts_only],
                "prefix_outputs": [float(x) for x in with_outputs],
            }
        },
    )


def exercise6(engine: str = "native") -> Table:
    vocab = Vocabulary()
    t = RadixCache(engine=engine, vocab=vocab)
    t.insert("you are a helpful assistant . what is paging ?")
    t.insert("you are a careful reviewer .")
    before = t.pretty()
    request = "you are a helpful assistant . explain paging ."
    m = t.match_prefix(request)
    t.insert(request)
    rows: list[list[object]] = [["tree before", ""]]
    rows += [[f"  {line}", n] for line, n in _drawing_from(before)]
    rows.append([f"match: {request}", m.length])
    rows.append(["tree after inserting it", ""])
    rows += [[f"  {line}", n] for line, n in _drawing(t)]
    return Table(
        title="05-5  Exercise 6: prefix matching",
        columns=["", "tokens"],
        rows=rows,
        note=(
            f'The request shares "you are a helpful assistant .": {m.length} tokens of prefill skipped. The node '
            '"helpful assistant . what is paging ?" splits after ".", and "explain paging ." becomes the second '
            'child of "helpful assistant .".'
        ),
        key="05-5",
        extra={"match": m.length},
    )


def _drawing_from(pretty: str) -> list[tuple[str, int]]:
    out = []
    for line in pretty.splitlines():
        text, _, length = line.partition("  length ")
        out.append((text, int(length.split()[0])))
    return out


MOONCAKE_DATASETS = ("mooncake-conversation", "mooncake-synthetic")


def mooncake_curves(engine: str = "native") -> Table:
    """The block-level prefix hit ratio of the Mooncake traces at several capacities; a trace
    that cannot be had (no network, no local copy) is named in the note instead."""
    caps: list[Optional[int]] = [100, 1_000, 5_000, 10_000, 50_000, None]
    rows = []
    missing = []
    for name in MOONCAKE_DATASETS:
        path, _ = datasets.try_fetch(name)
        if path is None:
            missing.append(name)
            continue
        w: Requests = mooncake(path)
        ratios = curve(w, caps, engine=engine)
        rows.append([name, len(w), w.total_tokens, *[float(r) for r in ratios]])
    return Table(
        title="05-6  Mooncake traces: block-level prefix hit ratio (one block = 512 tokens)",
        columns=["trace", "requests", "blocks", *[("unlimited" if c is None else f"{c:,} blocks") for c in caps]],
        rows=rows,
        note=(
            "Each request is its list of block hashes; a request reuses the longest cached prefix of its blocks "
            "(a radix tree of page size 1 over block ids, LRU leaf eviction)."
            + (f" Not shown: {datasets.missing_note(missing)}" if missing else "")
        ),
        key="05-6",
    )


def tables(quick: bool = False) -> list[Table]:
    """Every table of lecture demo 05 and exercise 6 (plus the Mooncake curves unless ``quick``)."""
    out = [demo1_tree(), demo2_sharing(), demo3_locks(), demo4_prefix_vs_whole(quick=quick), exercise6()]
    if not quick:
        out.append(mooncake_curves())
    return out
