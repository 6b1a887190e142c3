"""Count a fuzz log (``OSBENCH_FUZZ_LOG``) into the README's reliability table: per reader and
format, the damaged files tried, those refused with a clean error, those read equal to the
undamaged file, and those read otherwise (the damage changed data no format can check)."""

from __future__ import annotations

import collections
import json
import sys


def main(path: str) -> None:
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            counts[row["area"]][row["outcome"]] += 1
    print("| reader, format | damaged files | clean errors | equal results | read otherwise |")
    print("|---|---:|---:|---:|---:|")
    total: collections.Counter[str] = collections.Counter()
    for area in sorted(counts):
        c = counts[area]
        total.update(c)
        print(f"| {area} | {sum(c.values()):,} | {c['refused']:,} | {c['equal']:,} | {c['read']:,} |")
    print(f"| **all** | {sum(total.values()):,} | {total['refused']:,} | {total['equal']:,} | {total['read']:,} |")


if __name__ == "__main__":
    main(sys.argv[1])
