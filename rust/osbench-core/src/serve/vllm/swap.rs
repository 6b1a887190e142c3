//! Preemption by swap (`python/osbench/serve/vllm/swap.py`, which states every rule): vLLM
//! v0's `preemption_mode="swap"` (`vllm/core/scheduler.py: Scheduler._preempt_by_swap`,
//! `_swap_out`, `_swap_in` in vLLM 0.6), which v1 dropped (it only recomputes). A preempted
//! request's KV goes to a host pool of `swap_space` GiB and comes back, over the GPU's host
//! link, when it is admitted again; when the host pool has no room it is recomputed instead.
//! The copies' time is added to the step that makes them.

use crate::error::{invalid, Result};

/// The ways to preempt, the first the default (vLLM v1's only one).
pub const PREEMPTIONS: [&str; 2] = ["recompute", "swap"];

/// A host link: its name, its bandwidth each way in bytes per second, and where the figure
/// comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub name: &'static str,
    pub bandwidth: f64,
    pub source: &'static str,
}

/// The host links, the first the default: rated bandwidths from the specifications and
/// datasheets (a real copy reaches less; `swap_bandwidth` sets a measured figure).
pub const LINKS: [Link; 3] = [
    Link {
        name: "pcie5",
        // 32 GT/s a lane, 16 lanes, 128b/130b encoding: 63.0 GB/s each way.
        bandwidth: 32.0e9 * 16.0 / 8.0 * 128.0 / 130.0,
        source: "PCIe 5.0 x16: 32 GT/s a lane, 128b/130b (PCI-SIG, PCI Express Base Specification 5.0); the \
                 host link of the H100 (NVIDIA H100 datasheet: PCIe Gen5 128 GB/s both ways)",
    },
    Link {
        name: "pcie4",
        // 16 GT/s a lane, 16 lanes, 128b/130b encoding: 31.5 GB/s each way.
        bandwidth: 16.0e9 * 16.0 / 8.0 * 128.0 / 130.0,
        source: "PCIe 4.0 x16: 16 GT/s a lane, 128b/130b (PCI-SIG, PCI Express Base Specification 4.0); the \
                 host link of the A100 (NVIDIA A100 datasheet: PCIe Gen4 64 GB/s both ways)",
    },
    Link {
        name: "nvlink-c2c",
        bandwidth: 450.0e9,
        source: "NVLink-C2C between Grace and Hopper: 900 GB/s both ways, 450 GB/s each (NVIDIA GH200 Grace \
                 Hopper Superchip datasheet)",
    },
];

/// The link named `name` (`link`), checked.
pub fn link(name: &str) -> Result<Link> {
    LINKS.iter().copied().find(|l| l.name == name).ok_or_else(|| {
        let names: Vec<_> = LINKS.iter().map(|l| l.name).collect();
        invalid("link", format!("{name:?}"), format!("one of {}", names.join(", ")))
    })
}

/// Swap preemption, configured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Swap {
    /// Blocks the host pool holds: `floor(swap_space * 2**30 / kv_block_bytes)`, as vLLM v0
    /// counts its CPU blocks (`Worker.determine_num_available_blocks`), at most 2**62.
    pub host_blocks: u64,
    pub block_bytes: u64,
    /// Bytes per second each way (infinity: copies take no time).
    pub bandwidth: f64,
}

impl Swap {
    /// The swap of the configuration's `preemption`, `swap_space`, `link`, `swap_bandwidth`
    /// (bytes per second each way instead of the link's) and `kv_block_bytes` (one KV block on
    /// one GPU), None with `preemption="recompute"`; checked, naming the argument.
    pub fn new(
        preemption: &str,
        swap_space: f64,
        link_name: &str,
        swap_bandwidth: Option<f64>,
        kv_block_bytes: u64,
    ) -> Result<Option<Swap>> {
        if !PREEMPTIONS.contains(&preemption) {
            return Err(invalid("preemption", format!("{preemption:?}"), "'recompute' or 'swap'"));
        }
        if !(swap_space.is_finite() && swap_space >= 0.0) {
            return Err(invalid("swap_space", swap_space, "a finite number of GiB >= 0"));
        }
        let rated = link(link_name)?.bandwidth;
        if let Some(b) = swap_bandwidth {
            if b.is_nan() || b < 1.0 {
                return Err(invalid(
                    "swap_bandwidth",
                    b,
                    "a number of bytes per second >= 1 (inf: copies take no time)",
                ));
            }
        }
        if preemption == "recompute" {
            return Ok(None);
        }
        if kv_block_bytes == 0 || kv_block_bytes > 1 << 62 {
            return Err(invalid(
                "kv_block_bytes",
                kv_block_bytes,
                "a positive number of bytes up to 2**62 with preemption='swap' (simulate sets it from the model)",
            ));
        }
        let blocks = (swap_space * (1u64 << 30) as f64 / kv_block_bytes as f64).floor();
        Ok(Some(Swap {
            host_blocks: blocks.min((1u64 << 62) as f64) as u64,
            block_bytes: kv_block_bytes,
            bandwidth: swap_bandwidth.unwrap_or(rated),
        }))
    }

    /// Seconds to copy `bytes` over the link.
    pub fn seconds(&self, bytes: u64) -> f64 {
        bytes as f64 / self.bandwidth
    }
}
