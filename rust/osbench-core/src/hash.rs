//! splitmix64 (Steele, Lea and Flood, OOPSLA 2014; Vigna's reference code), written once: the
//! mixer behind SHARDS sampling and the generator behind the pointer-chase cycles. Python
//! reproduces it bit for bit (osbench.host.reference, the SHARDS tests).

/// 2**64 divided by the golden ratio: splitmix64's increment, and the multiplier of Fibonacci
/// hashing (the key -> slot hash of the open-addressing tables).
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64 of `x`: the generator's output for state `x`. Every input bit moves every output
/// bit, and it is a bijection on 64-bit words.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The splitmix64 generator: a tiny, well-mixed sequence that Python can reproduce exactly.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        let out = splitmix64(self.0);
        self.0 = self.0.wrapping_add(GOLDEN);
        out
    }

    /// A number in `0..n` (n > 0), by the multiply-high method.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

const XXH_P1: u64 = 0x9E37_79B1_85EB_CA87;
const XXH_P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const XXH_P3: u64 = 0x1656_67B1_9E37_79F9;
const XXH_P4: u64 = 0x85EB_CA77_C2B2_AE63;
const XXH_P5: u64 = 0x27D4_EB2F_1656_67C5;

/// XXH64 (Collet's xxHash, 64-bit) of the 8 little-endian bytes of `value` under `seed`: an
/// input shorter than one stripe, so one 8-byte round and the final avalanche. libCacheSim
/// hashes object ids with it (W-TinyLFU's sketch); `osbench.cache.reference.wtinylfu`
/// reproduces it.
#[inline]
pub fn xxh64_u64(value: u64, seed: u64) -> u64 {
    let mut h = seed.wrapping_add(XXH_P5).wrapping_add(8);
    let k = value.wrapping_mul(XXH_P2).rotate_left(31).wrapping_mul(XXH_P1);
    h = (h ^ k).rotate_left(27).wrapping_mul(XXH_P1).wrapping_add(XXH_P4);
    h = (h ^ (h >> 33)).wrapping_mul(XXH_P2);
    h = (h ^ (h >> 29)).wrapping_mul(XXH_P3);
    h ^ (h >> 32)
}
