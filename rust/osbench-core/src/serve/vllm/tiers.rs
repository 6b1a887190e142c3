//! KV tiers below the prefix cache (`python/osbench/serve/vllm/tiers.py`, which states every
//! rule): host memory and SSD, each a cache of `osbench.cache`'s policies (the same
//! [`Online`] caches `osbench.cache.new` makes) over block contents. Content the GPU's prefix
//! cache evicts is stored in every tier; an admission's prefix lookup goes on into the tiers
//! after the GPU's run of hits, and what it finds is loaded into fresh blocks, the loads'
//! time added to the step.

use super::swap;
use crate::cache::online::Online;
use crate::cache::Options;
use crate::error::{invalid, Result};
pub use crate::serve::fields::TierSettings;
use crate::serve::scheduler::TierCounts;

/// Where a tier keeps its blocks: a bandwidth each way in bytes per second, a latency per
/// load in seconds, and where the figures come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Medium {
    pub name: &'static str,
    pub bandwidth: f64,
    pub latency: f64,
    pub source: &'static str,
}

/// Host memory over a host link of swap's table (one source for the links' bandwidths).
const fn host(link: usize, name: &'static str, source: &'static str) -> Medium {
    Medium { name, bandwidth: swap::LINKS[link].bandwidth, latency: HOST_LATENCY, source }
}

/// Seconds a load from host memory costs beyond its bytes: an assumption (a DMA posted and
/// completed, a few microseconds), not a datasheet figure.
const HOST_LATENCY: f64 = 10e-6;
/// And from an NVMe SSD: an assumption of the order of a flash read (tens of microseconds) and
/// its completion.
const SSD_LATENCY: f64 = 100e-6;

/// The tiers' media, the first the default.
pub const MEDIA: [Medium; 5] = [
    host(0, "pcie5", "host DRAM over PCIe 5.0 x16 (swap's pcie5 link: 63.0 GB/s each way); 10 us a load, assumed"),
    host(1, "pcie4", "host DRAM over PCIe 4.0 x16 (swap's pcie4 link: 31.5 GB/s each way); 10 us a load, assumed"),
    host(2, "nvlink-c2c", "Grace's LPDDR5X over the GH200's NVLink-C2C (450 GB/s each way); 10 us a load, assumed"),
    Medium {
        name: "nvme-gen4",
        bandwidth: 7.45e9,
        latency: SSD_LATENCY,
        source: "an NVMe SSD on PCIe 4.0 x4: 7,450 MB/s sequential read (Samsung 990 PRO datasheet); 100 us a \
                 load, assumed",
    },
    Medium {
        name: "nvme-gen5",
        bandwidth: 14.8e9,
        latency: SSD_LATENCY,
        source: "an NVMe SSD on PCIe 5.0 x4: 14,800 MB/s sequential read (Samsung 9100 PRO datasheet); 100 us a \
                 load, assumed",
    },
];

/// One tier, configured.
#[derive(Debug, Clone, PartialEq)]
pub struct TierConfig {
    pub policy: String,
    /// Blocks it holds: `floor(gib * 2**30 / kv_block_bytes)`.
    pub blocks: u64,
    pub bandwidth: f64,
    pub latency: f64,
    pub costs: bool,
}

/// The tiers, configured: each tier, a block's bytes, and the recompute cost of block `k`,
/// `block_flops + block_flops_step * k`.
#[derive(Debug, Clone, PartialEq)]
pub struct TiersConfig {
    pub tiers: Vec<TierConfig>,
    pub block_bytes: u64,
    pub block_flops: f64,
    pub block_flops_step: f64,
}

/// At most this many tiers (host memory, SSD, and a few more).
pub const MAX_TIERS: usize = 8;

impl TiersConfig {
    /// The tiers of `tiers`, None for none; checked, naming the argument.
    pub fn new(
        tiers: &[TierSettings],
        kv_block_bytes: u64,
        block_flops: f64,
        block_flops_step: f64,
    ) -> Result<Option<TiersConfig>> {
        if !(block_flops.is_finite() && block_flops > 0.0) {
            return Err(invalid("block_flops", block_flops, "a finite number of FLOPs > 0"));
        }
        if !(block_flops_step.is_finite() && block_flops_step >= 0.0) {
            return Err(invalid("block_flops_step", block_flops_step, "a finite number of FLOPs >= 0"));
        }
        if tiers.is_empty() {
            return Ok(None);
        }
        if tiers.len() > MAX_TIERS {
            return Err(invalid("kv_tiers", format!("{} tiers", tiers.len()), format!("at most {MAX_TIERS} tiers")));
        }
        if kv_block_bytes == 0 || kv_block_bytes > 1 << 62 {
            return Err(invalid(
                "kv_block_bytes",
                kv_block_bytes,
                "a positive number of bytes up to 2**62 with kv_tiers (simulate sets it from the model)",
            ));
        }
        let mut out = Vec::with_capacity(tiers.len());
        for (i, t) in tiers.iter().enumerate() {
            if !(t.gib.is_finite() && t.gib > 0.0) {
                return Err(invalid(
                    "kv_tiers",
                    format!("tier {i} of {} GiB", t.gib),
                    "tiers of a finite number of GiB > 0",
                ));
            }
            if t.bandwidth.is_nan() || t.bandwidth < 1.0 {
                return Err(invalid(
                    "kv_tiers",
                    format!("tier {i} of {} bytes/s", t.bandwidth),
                    "tiers of a bandwidth >= 1 byte per second (inf: loads take no time)",
                ));
            }
            if !(t.latency.is_finite() && t.latency >= 0.0) {
                return Err(invalid(
                    "kv_tiers",
                    format!("tier {i} of {} s a load", t.latency),
                    "tiers of a latency of a finite number of seconds >= 0",
                ));
            }
            let blocks = (t.gib * (1u64 << 30) as f64 / kv_block_bytes as f64).floor().min((1u64 << 62) as f64) as u64;
            // The policy's own checks (its name, its least capacity, costs taken or not).
            Online::new(&t.policy, blocks.max(1), Options::default(), false, t.costs)?;
            if blocks == 0 {
                return Err(invalid(
                    "kv_tiers",
                    format!("tier {i} of {} GiB", t.gib),
                    format!("tiers with room for at least one KV block of {kv_block_bytes} bytes"),
                ));
            }
            out.push(TierConfig {
                policy: t.policy.clone(),
                blocks,
                bandwidth: t.bandwidth,
                latency: t.latency,
                costs: t.costs,
            });
        }
        Ok(Some(TiersConfig { tiers: out, block_bytes: kv_block_bytes, block_flops, block_flops_step }))
    }
}

/// The tiers of a running engine.
pub struct Tiers {
    config: TiersConfig,
    caches: Vec<Online>,
    pub counts: Vec<TierCounts>,
    /// Blocks the step loads from each tier.
    step_loads: Vec<u64>,
}

impl std::fmt::Debug for Tiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiers").field("config", &self.config).field("counts", &self.counts).finish()
    }
}

impl Tiers {
    pub fn new(config: &TiersConfig) -> Result<Tiers> {
        let caches = config
            .tiers
            .iter()
            .map(|t| Online::new(&t.policy, t.blocks, Options::default(), false, t.costs))
            .collect::<Result<Vec<_>>>()?;
        let n = config.tiers.len();
        Ok(Tiers { config: config.clone(), caches, counts: vec![TierCounts::default(); n], step_loads: vec![0; n] })
    }

    /// The first tier (fastest first) holding the content `hash`, if any.
    pub fn find(&self, hash: u64) -> Option<u8> {
        self.caches.iter().position(|c| c.contains(i128::from(hash))).map(|t| t as u8)
    }

    fn cost(&self, position: u64, costs: bool) -> Option<f64> {
        costs.then_some(self.config.block_flops + self.config.block_flops_step * position as f64)
    }

    /// An admission loads the content `hash` (block `position` of its request) from `tier`,
    /// which held it at the lookup: a hit of its cache, unless an earlier block's hit pushed it
    /// out (slru's and wtinylfu's hits can evict).
    pub fn load(&mut self, tier: u8, hash: u64, position: u64) -> Result<()> {
        let t = tier as usize;
        let cost = self.cost(position, self.config.tiers[t].costs);
        if self.caches[t].contains(i128::from(hash)) {
            self.caches[t].access(i128::from(hash), None, cost)?;
        }
        self.counts[t].hits += 1;
        self.step_loads[t] += 1;
        Ok(())
    }

    /// The GPU evicted the content `hash` (block `position` of its request): every tier
    /// stores it.
    pub fn store(&mut self, hash: u64, position: u64) -> Result<()> {
        for t in 0..self.caches.len() {
            let cost = self.cost(position, self.config.tiers[t].costs);
            let held = self.caches[t].access(i128::from(hash), None, cost)?;
            self.counts[t].stored += 1;
            self.counts[t].inserted += u64::from(!held);
        }
        Ok(())
    }

    /// The step's loads, as (bytes, seconds), and a new step begins: each tier loaded from
    /// costs its latency and its bytes over its bandwidth, the tiers one after the other.
    pub fn take_step_loads(&mut self) -> (u64, f64) {
        let (mut bytes, mut seconds) = (0u64, 0.0f64);
        for (t, loads) in self.step_loads.iter_mut().enumerate() {
            if *loads > 0 {
                let tier = &self.config.tiers[t];
                let b = *loads * self.config.block_bytes;
                bytes += b;
                seconds += tier.latency + b as f64 / tier.bandwidth;
                *loads = 0;
            }
        }
        (bytes, seconds)
    }

    /// The part of the tiers the livelock guard sees: per tier the new contents it took and
    /// the contents it holds. Equal twice, nothing was inserted between (the first only grows),
    /// so nothing left either: the same contents, the same lookups' answers.
    pub fn state(&self) -> impl Iterator<Item = u64> + '_ {
        self.counts.iter().zip(&self.caches).flat_map(|(c, cache)| [c.inserted, cache.len() as u64])
    }
}
