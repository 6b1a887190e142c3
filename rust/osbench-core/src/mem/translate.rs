//! Address translation through a one-level page table, and PagedAttention slot mapping.
//!
//! Lecture section 3.2: a virtual address splits into a page number and an offset; the page
//! table maps the page number to a frame; the physical address is `frame * page_size + offset`.
//! A block table is the same thing with tokens for bytes: token position `p` of a sequence
//! lives in slot `table[p / block_size] * block_size + p % block_size`.

use crate::cancel::Cancel;
use crate::error::{invalid, Error, Result};
use crate::par;

/// How many addresses run between two looks at the cancel flag.
pub const CHUNK: usize = 1 << 18;

/// The value written for an address whose page (or token whose block) is not mapped.
pub const UNMAPPED: i64 = -1;

/// Below this many items a call runs on the calling thread only.
const PARALLEL_MIN: usize = 1 << 20;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

/// Run `work(items, out, first_index)` over contiguous parts of `items`/`out` on up to
/// `threads()` threads and add up what the parts return; the first error by position wins.
fn split<T: Sync>(
    items: &[T],
    out: &mut [i64],
    work: impl Fn(&[T], &mut [i64], usize) -> Result<u64> + Sync,
) -> Result<u64> {
    let n_threads = if items.len() < PARALLEL_MIN { 1 } else { threads() };
    if n_threads <= 1 {
        return work(items, out, 0);
    }
    let part = items.len().div_ceil(n_threads);
    let parts: Vec<_> = items.chunks(part).zip(out.chunks_mut(part)).enumerate().collect();
    let counts = par::map(parts, n_threads, |(k, (items, out))| work(items, out, k * part))?;
    Ok(counts.into_iter().sum())
}

/// Entries must be a frame number (>= 0) or -1, and `frame * unit + (unit - 1)` must fit in i64.
fn check_table(name: &'static str, table: &[i64], unit: u64) -> Result<()> {
    let max_frame = i64::MAX as u64 / unit.max(1) - 1;
    for (i, &f) in table.iter().enumerate() {
        if f < UNMAPPED {
            return Err(invalid(name, format!("{f} at index {i}"), "frame numbers >= 0, or -1 for an unmapped page"));
        }
        if f >= 0 && f as u64 > max_frame {
            return Err(invalid(
                name,
                format!("{f} at index {i}"),
                format!("frame numbers up to {max_frame}, so addresses fit in int64"),
            ));
        }
    }
    Ok(())
}

fn first_negative(name: &'static str, values: &[i64], base: usize) -> Error {
    let (i, v) = values.iter().enumerate().find(|(_, &v)| v < 0).map_or((0, 0), |(i, &v)| (i, v));
    invalid(name, format!("{v} at index {}", base + i), "non-negative integers")
}

/// Translate `vaddrs` through `table` (`table[vpn]` = frame or -1) with pages of `page_size`
/// bytes (a power of two). Writes physical addresses (-1 where unmapped) to `out` and returns
/// the number of page faults.
pub fn translate(vaddrs: &[i64], table: &[i64], page_size: u64, out: &mut [i64], cancel: &Cancel) -> Result<u64> {
    if page_size == 0 || !page_size.is_power_of_two() {
        return Err(invalid("page_size", page_size, "a power of two (the offset is the low bits of the address)"));
    }
    if out.len() != vaddrs.len() {
        return Err(invalid("out", format!("{} entries", out.len()), format!("{} entries", vaddrs.len())));
    }
    check_table("page_table", table, page_size)?;
    let shift = page_size.trailing_zeros();
    let mask = (page_size - 1) as i64;
    cancel.plan(vaddrs.len() as u64);
    split(vaddrs, out, |vaddrs, out, base| {
        let mut faults = 0u64;
        for (start, (chunk, out)) in (base..).step_by(CHUNK).zip(vaddrs.chunks(CHUNK).zip(out.chunks_mut(CHUNK))) {
            cancel.check()?;
            // OR of every address: its sign bit says whether any was negative (checked once per chunk).
            let mut any = 0i64;
            for (&v, o) in chunk.iter().zip(out.iter_mut()) {
                any |= v;
                let vpn = (v as u64 >> shift) as usize;
                let frame = table.get(vpn).copied().unwrap_or(UNMAPPED);
                // Branch-free: `frame >> 63` is all ones for -1 (a fault), zero otherwise, and
                // -1 OR anything is -1. No mispredicted branch stalls the next table loads.
                let fault = frame >> 63;
                faults += (fault & 1) as u64;
                *o = ((frame << shift) | (v & mask)) | fault;
            }
            if any < 0 {
                return Err(first_negative("vaddrs", chunk, start));
            }
            cancel.progress(chunk.len() as u64);
        }
        Ok(faults)
    })
}

/// Which row of the block table each token belongs to.
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    /// Token `i` belongs to row `i / tokens_per_row` (a 2-D batch of positions, row-major).
    Grid { tokens_per_row: usize },
    /// Token `i` belongs to row `seq_ids[i]` (the flattened form of a ragged batch).
    Ids(&'a [i64]),
}

/// Map token positions to KV slots. `table` is a row-major `n_rows x row_len` block table
/// (entries: physical block or -1). Writes slots (-1 where the block is unallocated or past
/// the end of the row) to `out` and returns how many tokens were unmapped.
pub fn slot_mapping(
    table: &[i64],
    row_len: usize,
    rows: Rows<'_>,
    positions: &[i64],
    block_size: u64,
    out: &mut [i64],
    cancel: &Cancel,
) -> Result<u64> {
    if block_size == 0 {
        return Err(invalid("block_size", block_size, "a positive number of tokens per block"));
    }
    if out.len() != positions.len() {
        return Err(invalid("out", format!("{} entries", out.len()), format!("{} entries", positions.len())));
    }
    if row_len == 0 && !table.is_empty() || row_len > 0 && table.len() % row_len != 0 {
        return Err(invalid(
            "block_table",
            format!("{} entries", table.len()),
            format!("a whole number of rows of {row_len}"),
        ));
    }
    let n_rows = table.len().checked_div(row_len).unwrap_or(0);
    match rows {
        Rows::Grid { tokens_per_row } => {
            let needed = match (positions.len(), tokens_per_row) {
                (0, _) => 0,
                (_, 0) => usize::MAX,
                (n, t) => n.div_ceil(t),
            };
            if needed > n_rows {
                return Err(invalid(
                    "positions",
                    format!("{} tokens", positions.len()),
                    format!("at most {n_rows} rows of {tokens_per_row}"),
                ));
            }
        }
        Rows::Ids(ids) => {
            if ids.len() != positions.len() {
                return Err(invalid(
                    "seq_ids",
                    format!("{} entries", ids.len()),
                    format!("{} entries, one per position", positions.len()),
                ));
            }
            if let Some((i, &s)) = ids.iter().enumerate().find(|(_, &s)| s < 0 || s as u64 >= n_rows as u64) {
                return Err(invalid("seq_ids", format!("{s} at index {i}"), format!("row numbers in [0, {n_rows})")));
            }
        }
    }
    check_table("block_table", table, block_size)?;
    let pow2 = block_size.is_power_of_two();
    let shift = block_size.trailing_zeros();
    let bs = block_size as i64;
    cancel.plan(positions.len() as u64);
    split(positions, out, |positions, out, base| {
        let mut unmapped = 0u64;
        for (start, (chunk, out)) in (base..).step_by(CHUNK).zip(positions.chunks(CHUNK).zip(out.chunks_mut(CHUNK))) {
            cancel.check()?;
            let mut any = 0i64;
            for (j, (&p, o)) in chunk.iter().zip(out.iter_mut()).enumerate() {
                any |= p;
                let i = start + j;
                let row = match rows {
                    Rows::Grid { tokens_per_row } => i / tokens_per_row,
                    Rows::Ids(ids) => ids.get(i).copied().unwrap_or(0) as usize,
                };
                let (logical, offset) =
                    if pow2 { ((p as u64 >> shift) as usize, p & (bs - 1)) } else { ((p / bs) as usize, p % bs) };
                let block = if logical < row_len {
                    table.get(row * row_len + logical).copied().unwrap_or(UNMAPPED)
                } else {
                    UNMAPPED
                };
                let fault = block >> 63; // all ones for -1, as in translate
                unmapped += (fault & 1) as u64;
                *o = (block * bs + offset) | fault;
            }
            if any < 0 {
                return Err(first_negative("positions", chunk, start));
            }
            cancel.progress(chunk.len() as u64);
        }
        Ok(unmapped)
    })
}
