//! Page faults, measured: the cost of a minor fault, and fork's copy-on-write.
//!
//! A fresh anonymous mapping has no physical pages: the first touch of each page traps into the
//! kernel (a minor fault), which zeroes a page frame and maps it. `MAP_POPULATE` does that work
//! up front inside `mmap`, so the touches that follow do not fault. `MADV_HUGEPAGE` asks for
//! 2 MiB transparent huge pages: one fault then maps 512 small pages' worth (lecture section 3.4).
//!
//! After `fork`, parent and child share every page frame read-only; the first write to a page
//! by either copies it (a copy-on-write fault, lecture section 3.5). A child that writes `k`
//! pages of a large inherited buffer takes about `k` minor faults, whatever the buffer's size.
//! Fault counts come from `getrusage` (`ru_minflt`), of the thread (or of the child process).

use super::sys::{self, faults, now_ns, page_size, Mapping};
use crate::cancel::Cancel;
use crate::error::{invalid, Result};

/// How the pages of a fresh mapping get their frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefault {
    /// Each first touch faults.
    None,
    /// `MAP_POPULATE`: the kernel maps every page inside `mmap`.
    Populate,
    /// `madvise(MADV_HUGEPAGE)` before the touches: 2 MiB pages where the kernel allows them.
    HugePage,
}

impl Prefault {
    pub fn parse(name: &str) -> Result<Prefault> {
        match name {
            "none" => Ok(Prefault::None),
            "populate" => Ok(Prefault::Populate),
            "hugepage" => Ok(Prefault::HugePage),
            _ => Err(invalid("prefault", name, "one of none, populate, hugepage")),
        }
    }
}

/// What touching a fresh mapping cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Touch {
    pub bytes: u64,
    pub page_size: u64,
    /// Pages touched (one write per small page).
    pub pages: u64,
    /// Faults taken by this thread during `mmap` (+ madvise) and during the touches.
    pub map_minor_faults: u64,
    pub touch_minor_faults: u64,
    pub major_faults: u64,
    /// Nanoseconds spent in `mmap` (+ madvise), and touching every page.
    pub map_ns: u64,
    pub touch_ns: u64,
}

const MAX_BYTES: u64 = 1 << 36;

/// Pages written between two looks at the cancel flag.
const PAGES_BETWEEN_CHECKS: u64 = 1 << 14;
/// How long the parent waits for the copy-on-write child between two cancel checks.
const CHILD_WAIT_MS: i32 = 50;

/// Map `bytes` of fresh anonymous memory, then write one byte in every page.
pub fn touch_fresh(bytes: u64, prefault: Prefault, cancel: &Cancel) -> Result<Touch> {
    let page = page_size() as u64;
    if bytes < page || bytes > MAX_BYTES {
        return Err(invalid("nbytes", bytes, format!("a size from one page ({page} bytes) to 64 GiB")));
    }
    let flags = if prefault == Prefault::Populate { libc::MAP_POPULATE } else { 0 };
    let (f0, m0) = faults(true);
    let t0 = now_ns();
    let map = Mapping::anonymous(bytes as usize, false, flags)?;
    if prefault == Prefault::HugePage {
        map.advise(libc::MADV_HUGEPAGE)?;
    }
    let t1 = now_ns();
    let (f1, _) = faults(true);
    let pages = bytes / page;
    for p in 0..pages {
        if p % PAGES_BETWEEN_CHECKS == 0 {
            cancel.check()?;
        }
        // SAFETY: p * page < bytes: inside the mapping.
        unsafe { std::ptr::write_volatile(map.ptr.add((p * page) as usize), 1u8) };
    }
    let t2 = now_ns();
    let (f2, m2) = faults(true);
    drop(map);
    Ok(Touch {
        bytes,
        page_size: page,
        pages,
        map_minor_faults: f1 - f0,
        touch_minor_faults: f2 - f1,
        major_faults: m2 - m0,
        map_ns: t1 - t0,
        touch_ns: t2 - t1,
    })
}

/// What a forked child's writes cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Cow {
    pub buffer_pages: u64,
    pub pages_written: u64,
    /// Minor faults the child took while writing (getrusage of the child, before and after).
    pub child_minor_faults: u64,
    pub child_ns: u64,
}

/// Fill a private buffer of `buffer_bytes`, fork, and let the child write one byte in each of
/// the first `pages_written` pages (spread over the buffer). Transparent huge pages are turned
/// off for the buffer so that each copy is one small page.
pub fn cow_faults(buffer_bytes: u64, pages_written: u64, cancel: &Cancel) -> Result<Cow> {
    let page = page_size() as u64;
    if buffer_bytes < page || buffer_bytes > MAX_BYTES {
        return Err(invalid("buffer_bytes", buffer_bytes, format!("a size from one page ({page} bytes) to 64 GiB")));
    }
    let buffer_pages = buffer_bytes / page;
    if pages_written > buffer_pages {
        return Err(invalid("pages_written", pages_written, format!("at most the buffer's {buffer_pages} pages")));
    }
    let map = Mapping::anonymous(buffer_bytes as usize, false, 0)?;
    let _ = map.advise(libc::MADV_NOHUGEPAGE); // best effort: THP may be compiled out
    for p in 0..buffer_pages {
        if p % PAGES_BETWEEN_CHECKS == 0 {
            cancel.check()?;
        }
        // SAFETY: inside the mapping.
        unsafe { std::ptr::write_volatile(map.ptr.add((p * page) as usize), 1u8) };
    }
    let [read_fd, write_fd] = sys::pipe()?;
    // Spread the written pages evenly over the buffer.
    let step = buffer_pages.checked_div(pages_written).unwrap_or(1);
    // SAFETY: the child only calls getrusage, clock_gettime, writes memory it owns, write, _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let (f0, _) = faults(false);
        let t0 = now_ns();
        for k in 0..pages_written {
            // SAFETY: k * step < buffer_pages: inside the mapping.
            unsafe { std::ptr::write_volatile(map.ptr.add((k * step * page) as usize), 2u8) };
        }
        let t1 = now_ns();
        let (f1, _) = faults(false);
        let mut msg = [0u8; 16];
        msg[..8].copy_from_slice(&(f1 - f0).to_ne_bytes());
        msg[8..].copy_from_slice(&(t1 - t0).to_ne_bytes());
        let ok = sys::write_all(write_fd, &msg).is_ok();
        sys::child_exit(if ok { 0 } else { 1 });
    }
    if pid < 0 {
        let e = sys::errno();
        sys::close(read_fd);
        sys::close(write_fd);
        return Err(sys::os_error("fork", e));
    }
    sys::close(write_fd);
    // The child may write millions of pages: wait for it in short slices, so that a cancel
    // (Ctrl-C) stops it within one slice instead of after all its writes.
    loop {
        if let Err(e) = cancel.check() {
            sys::close(read_fd);
            sys::kill_child(pid);
            return Err(e);
        }
        match sys::wait_readable(read_fd, CHILD_WAIT_MS) {
            Ok(true) => break,
            Ok(false) => continue,
            Err(e) => {
                sys::close(read_fd);
                sys::kill_child(pid);
                return Err(sys::os_error("poll", e));
            }
        }
    }
    let mut msg = [0u8; 16];
    let got = sys::read_exact(read_fd, &mut msg);
    sys::close(read_fd);
    let ok = sys::wait_child(pid);
    if let Err(e) = got {
        return Err(sys::os_error("the copy-on-write child", e));
    }
    if !ok {
        return Err(sys::os_error("the copy-on-write child", libc::ECHILD));
    }
    let mut a = [0u8; 8];
    a.copy_from_slice(&msg[..8]);
    let mut b = [0u8; 8];
    b.copy_from_slice(&msg[8..]);
    Ok(Cow { buffer_pages, pages_written, child_minor_faults: u64::from_ne_bytes(a), child_ns: u64::from_ne_bytes(b) })
}
