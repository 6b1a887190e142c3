"""The links a disaggregated deployment moves KV over (:mod:`osbench.serve.disagg`): a
:class:`Link` is a bandwidth (bytes per second, one direction, per GPU: every tensor-parallel
rank sends its own shard over its own link, as NIXL transfers per rank) and a latency (seconds
added to every transfer). :data:`LINKS` names the presets.

Bandwidths are the datasheets' figures, per direction:

- ``nvlink-4``: NVLink 4 on H100 SXM, 900 GB/s bidirectional per GPU (NVIDIA H100 Tensor Core
  GPU datasheet): 450 GB/s each way;
- ``nvlink-5``: NVLink 5 on B200, 1.8 TB/s bidirectional per GPU (NVIDIA DGX B200 datasheet,
  "fifth-generation NVLink"): 900 GB/s each way;
- ``ib-ndr-400g`` (alias ``ib-400g``): InfiniBand NDR, 400 Gb/s per port (NVIDIA ConnectX-7
  datasheet; one port per GPU as in DGX H100): 50 GB/s;
- ``roce-200g`` / ``roce-400g``: RoCE v2 over 200 / 400 GbE (ConnectX-7 datasheet): 25 / 50 GB/s;
- ``pcie-5-x16``: PCIe 5.0 x16, 32 GT/s per lane with 128b/130b coding (PCI-SIG, PCI Express
  Base Specification 5.0): 63.0 GB/s each way, the figure of the host links' table in the core
  (``SERVE_LINKS``' ``pcie5``, the link swap preemption copies over);
- ``ideal``: infinitely fast, no latency (the bound the tests check against).

Latencies are not datasheet figures: they are a stated assumption of the end-to-end cost of one
transfer (a one-sided RDMA read or a copy, posted and completed), of the order the vendors give
for a small message: 1 us over NVLink and PCIe, 5 us over InfiniBand, 10 us over RoCE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Union

from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class Link:
    """A KV transfer link: ``bandwidth`` in bytes per second (one direction, per GPU; infinity:
    instant) and ``latency`` in seconds per transfer."""

    name: str
    bandwidth: float
    latency: float

    def __post_init__(self) -> None:
        for field, value in (("bandwidth", self.bandwidth), ("latency", self.latency)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ArgumentTypeError(f"{field}={value!r} is not accepted: it must be a number")
        if not self.bandwidth > 0:
            raise ArgumentError(
                f"bandwidth={self.bandwidth!r} is not accepted: it must be a positive number of bytes per second "
                "(math.inf: an instant link)"
            )
        if not (math.isfinite(self.latency) and self.latency >= 0):
            raise ArgumentError(f"latency={self.latency!r} is not accepted: it must be finite seconds >= 0")

    def seconds(self, num_bytes: float) -> float:
        """How long ``num_bytes`` take on the wire, the latency aside."""
        return 0.0 if math.isinf(self.bandwidth) else num_bytes / self.bandwidth


GB = 1e9
_HOST = {name: bandwidth for name, bandwidth, _ in _native.SERVE_LINKS}
"""The host links' rated bandwidths, declared once in the core."""
LINKS: dict[str, Link] = {
    link.name: link
    for link in (
        Link("nvlink-4", 450 * GB, 1e-6),
        Link("nvlink-5", 900 * GB, 1e-6),
        Link("ib-ndr-400g", 50 * GB, 5e-6),
        Link("roce-200g", 25 * GB, 10e-6),
        Link("roce-400g", 50 * GB, 10e-6),
        Link("pcie-5-x16", _HOST["pcie5"], 1e-6),
        Link("ideal", math.inf, 0.0),
    )
}
"""Every link preset by name (see the module for the sources)."""
ALIASES = {"ib-400g": "ib-ndr-400g"}


def link_of(link: Union[str, Link, Any], argument: str = "kv_link") -> Link:
    """The :class:`Link` ``argument=link`` names: a name of :data:`LINKS` (or ``ib-400g``) or a
    Link."""
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        name = ALIASES.get(link, link)
        if name not in LINKS:
            raise ArgumentError(
                f"{argument}={link!r} is not accepted: use one of {', '.join([*LINKS, *ALIASES])}, "
                "or osbench.serve.Link(name, bandwidth, latency)"
            )
        return LINKS[name]
    raise ArgumentTypeError(
        f"{argument}={link!r:.60} is not accepted: use a name ({', '.join(LINKS)}) or osbench.serve.Link"
    )


__all__ = ["ALIASES", "LINKS", "Link", "link_of"]
