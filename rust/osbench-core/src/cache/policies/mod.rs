//! The table of cache policies: one row per policy, in the order users see them, and one file
//! per policy beside this one, named as the policy. From these rows come the `AnyPolicy` enum,
//! its dispatch and constructor, and [`TABLE`], which the binding exports and from which Python
//! derives every list, minimum, flag and check (`osbench.cache.POLICIES` and the rest).
//!
//! A row gives the type (a list-and-evict policy runs under [`Demand`], the byte accounting
//! written once) and the facts: the smallest capacity that leaves every queue room for one
//! object; whether it is offline (needs each access's next use); whether it takes one cost per
//! access; the parameters it reads ([`Param`]); the libCacheSim class that agrees with it miss for miss.
//! Adding a policy: its file here with its `mod` line, its row below, its reference class and
//! reference registry row in Python (`docs/adding-a-policy.md`).

use super::accesses::Accesses;
use super::admission::AnyFilter;
use super::demand::Demand;
use super::params::{Accepts, Options, Param, Value};
use super::policy::{policy_table, Policy, PolicyInfo};
use super::steps::{access, access_gated, run, run_gated};
use crate::error::Result;

// The policies' files. Declared here rather than by the table's macro so that tools which read
// the source without expanding macros (cargo-mutants, rust-analyzer) find them.
pub mod arc;
pub mod belady_size;
pub mod cacheus;
pub mod clock;
pub mod clock2qplus;
pub mod clockpro;
pub mod fifo;
pub mod flashprob;
pub mod gdsf;
pub mod hyperbolic;
pub mod lecar;
pub mod lfu;
pub mod lfuda;
pub mod lhd;
pub mod lirs;
pub mod lru;
pub mod lruk;
pub mod lruprob;
pub mod mq;
pub mod opt;
pub mod random;
pub mod s3fifo;
pub mod sieve;
pub mod size;
pub mod slru;
pub mod twoq;
pub mod wtinylfu;

/// The seed of a randomised policy's draws (splitmix64, [`crate::hash::SplitMix64`]): one seed,
/// one sequence of evictions, in both engines. A row that reads it is randomised: it agrees
/// with its libCacheSim class in distribution, not miss for miss ([`PolicyInfo::randomised`]).
pub const SEED: Param = Param::int("seed", 0, 0, u64::MAX, "the seed of the policy's random draws (splitmix64)");

/// CLOCK-Pro's target for its cold pages (libCacheSim's `init-ratio-cold`, its Python class's default).
const INIT_RATIO_COLD: Param =
    Param::positive("init_ratio_cold", 0.5, 1.0, "the cold pages' share of the capacity (init-ratio-cold)");

/// A ratio from `min` to `max`, both included.
const fn ratio(name: &'static str, default: f64, min: f64, max: f64, doc: &'static str) -> Param {
    let accepts = Accepts::Real { min, min_open: false, max, max_open: false };
    Param { name, default: Value::Real(default), accepts, doc }
}

/// Clock2Q+'s parameters, at the defaults of libCacheSim's Python class (and of its C code).
const CLOCK2QPLUS: [Param; 4] = [
    Param::fraction("fifo_size_ratio", 0.1, "the small FIFO's share of the capacity (libCacheSim's fifo-size-ratio)"),
    ratio("ghost_size_ratio", 0.9, 0.0, 4.0, "the ghost FIFO's size over the capacity (ghost-size-ratio)"),
    Param::int("move_to_main_threshold", 1, 1, 1000, "counted hits that send a small-FIFO object to main"),
    ratio("corr_window_ratio", 0.5, 0.0, 1.0, "the correlation window over the small FIFO's size (corr-window-ratio)"),
];

/// CLOCK's (and CLOCK-Pro's) choice of the reference bit a newcomer starts with.
const BIT_ON_INSERT: Param =
    Param::flag("bit_on_insert", false, "a newcomer starts with its reference bit set (the textbook variant)");

policy_table! {
    fifo => Demand<fifo::Fifo> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("FIFO"),
    },
    lru => Demand<lru::Lru> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("LRU"),
    },
    lfu => Demand<lfu::Lfu> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("LFU"),
    },
    clock => Demand<clock::Clock> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [BIT_ON_INSERT], libcachesim: Some("Clock"),
    },
    arc => arc::Arc {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("ARC"),
    },
    opt => Demand<opt::Opt> {
        min_capacity: |_| 1, offline: true, takes_costs: false, params: [], libcachesim: Some("Belady"),
    },
    // libCacheSim's BeladySize samples 128 objects per eviction; this one finds the largest
    // score exactly, so it agrees miss for miss only where the sample sees every object.
    belady_size => belady_size::BeladySize {
        min_capacity: |_| 1, offline: true, takes_costs: false, params: [], libcachesim: None,
    },
    sieve => Demand<sieve::Sieve> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("Sieve"),
    },
    // Its small queue (10%) holds one object from 10 on.
    s3fifo => s3fifo::S3Fifo {
        min_capacity: |_| 10, offline: false, takes_costs: false, params: [], libcachesim: Some("S3FIFO"),
    },
    // Its Ain queue (25%) holds one object from 4 on.
    twoq => twoq::TwoQ {
        min_capacity: |_| 4, offline: false, takes_costs: false, params: [], libcachesim: Some("TwoQ"),
    },
    // Its LIR set (all but 1%, at least one object, of the capacity) holds one object from 2 on.
    lirs => lirs::Lirs {
        min_capacity: |_| 2, offline: false, takes_costs: false, params: [], libcachesim: Some("LIRS"),
    },
    // libCacheSim's ClockPro admits while its cold target has room and never evicts (see the
    // file); its cold target holds one object from 1 / init_ratio_cold on.
    clockpro => clockpro::ClockPro {
        min_capacity: |p| clockpro::min_capacity(p.real("init_ratio_cold")), offline: false, takes_costs: false,
        params: [BIT_ON_INSERT, INIT_RATIO_COLD], libcachesim: Some("ClockPro"),
    },
    // Its small FIFO admits only objects smaller than itself: 2 from 20 on (at 10%).
    clock2qplus => clock2qplus::Clock2QPlus {
        min_capacity: |p| clock2qplus::min_capacity(p.real("fifo_size_ratio")), offline: false, takes_costs: false,
        params: [CLOCK2QPLUS[0], CLOCK2QPLUS[1], CLOCK2QPLUS[2], CLOCK2QPLUS[3]], libcachesim: Some("Clock2QPlus"),
    },
    gdsf => gdsf::Gdsf {
        min_capacity: |_| 1, offline: false, takes_costs: true, params: [], libcachesim: Some("GDSF"),
    },
    size => size::Size {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: Some("Size"),
    },
    random => Demand<random::Random> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [SEED], libcachesim: Some("Random"),
    },
    hyperbolic => hyperbolic::Hyperbolic {
        min_capacity: |_| 1, offline: false, takes_costs: false,
        params: [SEED, Param::int("samples", 64, 1, 1024, "objects drawn per eviction (libCacheSim's n-sample)")],
        libcachesim: Some("Hyperbolic"),
    },
    lecar => lecar::LeCaR {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [SEED], libcachesim: Some("LeCaR"),
    },
    // Its SR and R lists (half the capacity each) hold one object from 2 on.
    cacheus => cacheus::Cacheus {
        min_capacity: |_| 2, offline: false, takes_costs: false, params: [SEED], libcachesim: Some("Cacheus"),
    },
    lhd => lhd::Lhd {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [SEED], libcachesim: Some("LHD"),
    },
    // Each segment (capacity / segments) holds one object from `segments` on.
    slru => slru::Slru {
        min_capacity: |p| p.int("segments"), offline: false, takes_costs: false,
        params: [Param::int("segments", 4, 1, slru::MAX_SEGMENTS as u64, "the number of LRU segments (libCacheSim's n-seg)")],
        libcachesim: Some("SLRU"),
    },
    lruk => Demand<lruk::LruK> {
        min_capacity: |_| 1, offline: false, takes_costs: false,
        params: [Param::int("k", 2, 1, 64, "the access ranked by: the K-th most recent (libCacheSim's k)")],
        libcachesim: Some("LRUK"),
    },
    lruprob => Demand<lruprob::LruProb> {
        min_capacity: |_| 1, offline: false, takes_costs: false,
        params: [SEED, Param::positive("prob", 0.5, 1.0, "a hit's chance of a promotion: one hit in int(1 / prob) promotes (libCacheSim's prob)")],
        libcachesim: Some("LRUProb"),
    },
    // RAM's share bounds nothing (the whole cache does the accounting, see the file), but
    // libCacheSim refuses a cache where it is 0: one object from 1 / ram_size_ratio on (20).
    flashprob => flashprob::FlashProb {
        min_capacity: |p| flashprob::min_capacity(p.real("ram_size_ratio")), offline: false, takes_costs: false,
        params: [
            SEED,
            Param::fraction("ram_size_ratio", 0.05, "RAM's share of the capacity; flash holds the rest (libCacheSim's ram-size-ratio)"),
            Param::positive("disk_admit_prob", 0.2, 1.0, "an object leaving RAM enters flash one time in int(1 / disk_admit_prob) (libCacheSim's disk-admit-prob)"),
        ],
        libcachesim: Some("FlashProb"),
    },
    mq => mq::Mq {
        min_capacity: |_| 1, offline: false, takes_costs: false,
        params: [
            Param::int("n_queue", 8, 1, mq::MAX_QUEUES, "the number of queues (libCacheSim's n-queue)"),
            Param::int("lifetime", 10_000, 1, 1 << 40, "ticks an unused object stays in its queue (libCacheSim's lifetime)"),
            Param::positive("qout_size_ratio", 4.0, 64.0, "Qout's size over the cache's (libCacheSim's Qout-size-ratio)"),
        ],
        libcachesim: Some("MQ"),
    },
    // Its window (1%) and probation segment (1/5 of the rest) hold one object from 100 on.
    wtinylfu => wtinylfu::WTinyLfu {
        min_capacity: |p| wtinylfu::min_capacity(p.real("window")), offline: false, takes_costs: false,
        params: [Param::fraction("window", 0.01, "the window LRU's share of the capacity (libCacheSim's window-size)")],
        libcachesim: Some("WTinyLFU"), hashes_keys: true,
    },
    // libCacheSim's LFUDA crashes or hangs on small caches (see the reference class): no peer.
    lfuda => Demand<lfuda::Lfuda> {
        min_capacity: |_| 1, offline: false, takes_costs: false, params: [], libcachesim: None,
    },
}
