"""Virtual memory and paging: translation, block tables, allocators, copy-on-write, thrashing.

Lecture section 3. The hot loops (translation, slot mapping, the allocation simulator) run
in Rust; :mod:`osbench.mem.reference` is the readable engine and agrees exactly
(``engine="reference"``).

- Translation (3.2): :func:`translate`, :func:`slot_mapping` (PagedAttention's block table),
  :func:`block_table_size`; multi-level tables :class:`PageTableLayout`, :data:`X86_64`,
  :func:`walk`, :func:`table_memory`, :class:`MultiLevelPageTable`; the TLB, :func:`tlb`.
- Allocation (3.3, 3.4): :func:`workload`, :class:`Workload`, :func:`simulate` with
  ``STRATEGIES`` (from the native core's table; what each reads in ``PARAMETERS``).
- Copy-on-write (3.5): :class:`BlockManager`, :func:`parallel_sampling`, :func:`beam_search`.
- Thrashing (3.6): :func:`working_set_trace`, :func:`thrashing`, :func:`mean_access_ns`,
  :func:`max_fault_rate` (exercise 7).

>>> import osbench as ob
>>> ob.mem.translate([5000, 20000], {0: 7, 1: 3, 2: 12, 3: 5}, 4096).faults
1
"""

from osbench.mem import reference
from osbench.mem.alloc import PARAMETERS, STRATEGIES, Allocation, Workload, simulate, workload
from osbench.mem.cow import BlockManager, Sharing, beam_search, parallel_sampling
from osbench.mem.paging import (
    TLB,
    X86_64,
    MultiLevelPageTable,
    PageTableLayout,
    TableMemory,
    Walk,
    table_memory,
    tlb,
    walk,
)
from osbench.mem.thrashing import Thrashing, max_fault_rate, mean_access_ns, thrashing, working_set_trace
from osbench.mem.translation import SlotMapping, Translation, block_table_size, slot_mapping, translate

__all__ = [
    "PARAMETERS",
    "STRATEGIES",
    "TLB",
    "X86_64",
    "Allocation",
    "BlockManager",
    "MultiLevelPageTable",
    "PageTableLayout",
    "Sharing",
    "SlotMapping",
    "TableMemory",
    "Thrashing",
    "Translation",
    "Walk",
    "Workload",
    "beam_search",
    "block_table_size",
    "max_fault_rate",
    "mean_access_ns",
    "parallel_sampling",
    "reference",
    "simulate",
    "slot_mapping",
    "table_memory",
    "thrashing",
    "tlb",
    "translate",
    "walk",
    "working_set_trace",
    "workload",
]
