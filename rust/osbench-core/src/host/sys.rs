//! Thin, safe wrappers around the few system calls the probes use.

use crate::error::{invalid, Error, Result};

/// The last `errno` of this thread.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A failed system call as a core error (Python sees an OSError; callers degrade to
/// "not available").
pub fn os_error(call: &'static str, errno: i32) -> Error {
    Error::Os { call, message: std::io::Error::from_raw_os_error(errno).to_string() }
}

/// The CPU this thread runs on now, or -1 if the kernel does not say.
pub fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu takes no arguments and only reads kernel state.
    unsafe { libc::sched_getcpu() }
}

/// The CPUs this thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Check a CPU number before any thread or child tries to pin itself to it.
pub fn check_cpu(name: &'static str, cpu: Option<usize>) -> Result<()> {
    match cpu {
        Some(c) if !allowed_cpus().contains(&c) => {
            Err(invalid(name, c, format!("one of the CPUs this process may use: {:?}", allowed_cpus())))
        }
        _ => Ok(()),
    }
}

/// Pin the calling thread to one CPU. Returns the errno on failure. Does not allocate (it runs in
/// forked children).
pub fn pin(cpu: usize) -> std::result::Result<(), i32> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(libc::EINVAL);
    }
    // SAFETY: the set is a local value, cpu is below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(errno());
        }
    }
    Ok(())
}

/// Monotonic time in nanoseconds, through `clock_gettime` (async-signal-safe, usable in children).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// Minor and major page faults so far, of this thread (`RUSAGE_THREAD`) or this process.
pub fn faults(thread: bool) -> (u64, u64) {
    // SAFETY: ru is a valid, writable rusage.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        let who = if thread { libc::RUSAGE_THREAD } else { libc::RUSAGE_SELF };
        libc::getrusage(who, &mut ru);
        (ru.ru_minflt as u64, ru.ru_majflt as u64)
    }
}

/// The page size of this host.
pub fn page_size() -> usize {
    // SAFETY: sysconf only reads.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// An anonymous memory mapping, unmapped on drop.
pub struct Mapping {
    pub ptr: *mut u8,
    pub len: usize,
}

// SAFETY: the mapping is plain memory; users synchronise through atomics placed in it.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `mmap` an anonymous region: `shared` makes it `MAP_SHARED` (visible across fork),
    /// otherwise `MAP_PRIVATE` (copy-on-write across fork); `extra` flags such as `MAP_POPULATE`.
    pub fn anonymous(len: usize, shared: bool, extra: libc::c_int) -> Result<Mapping> {
        if len == 0 {
            return Err(invalid("nbytes", len, "a positive size"));
        }
        let share = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
        // SAFETY: anonymous mapping with no address hint; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                share | libc::MAP_ANONYMOUS | extra,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(os_error("mmap", errno()));
        }
        Ok(Mapping { ptr: ptr as *mut u8, len })
    }

    /// `madvise` the whole mapping (MADV_HUGEPAGE, MADV_NOHUGEPAGE...).
    pub fn advise(&self, advice: libc::c_int) -> Result<()> {
        // SAFETY: the range is exactly this mapping.
        if unsafe { libc::madvise(self.ptr as *mut libc::c_void, self.len, advice) } != 0 {
            return Err(os_error("madvise", errno()));
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// A pipe `(read end, write end)`, close-on-exec.
pub fn pipe() -> Result<[libc::c_int; 2]> {
    let mut fds = [-1; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_error("pipe2", errno()));
    }
    Ok(fds)
}

/// Close a descriptor if it is open.
pub fn close(fd: libc::c_int) {
    if fd >= 0 {
        // SAFETY: closing a descriptor we own.
        unsafe { libc::close(fd) };
    }
}

/// Two of what `open` makes, or neither: the first goes to `close` when the second fails.
pub fn two<T>(open: impl Fn() -> Result<T>, close: impl FnOnce(T)) -> Result<(T, T)> {
    let first = open()?;
    match open() {
        Ok(second) => Ok((first, second)),
        Err(e) => {
            close(first);
            Err(e)
        }
    }
}

/// Move all `len` bytes of a buffer with `io(done)`, one `read` or `write` of its bytes from
/// `done` on (the call's return value), retrying on EINTR. A call that moves nothing is the
/// error `on_zero` when there is one (EOF for a read) and is made again otherwise. Does not
/// allocate.
#[inline]
fn move_all(len: usize, on_zero: Option<i32>, mut io: impl FnMut(usize) -> isize) -> std::result::Result<(), i32> {
    let mut done = 0;
    while done < len {
        let n = io(done);
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if let (0, Some(e)) = (n, on_zero) {
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

/// Write all of `buf`, retrying on EINTR. Does not allocate.
pub fn write_all(fd: libc::c_int, buf: &[u8]) -> std::result::Result<(), i32> {
    move_all(buf.len(), None, |done| {
        // SAFETY: the pointer and length stay inside buf.
        unsafe { libc::write(fd, buf.as_ptr().add(done) as *const libc::c_void, buf.len() - done) }
    })
}

/// Fill all of `buf`, retrying on EINTR; EOF is `EPIPE`. Does not allocate.
pub fn read_exact(fd: libc::c_int, buf: &mut [u8]) -> std::result::Result<(), i32> {
    let len = buf.len();
    move_all(len, Some(libc::EPIPE), |done| {
        // SAFETY: the pointer and length stay inside buf.
        unsafe { libc::read(fd, buf.as_mut_ptr().add(done) as *mut libc::c_void, len - done) }
    })
}

/// Wait up to `timeout_ms` for `fd` to be readable (or at its end); false on timeout. EINTR
/// counts as a timeout, so that the caller checks its cancel flag and waits again.
pub fn wait_readable(fd: libc::c_int, timeout_ms: i32) -> std::result::Result<bool, i32> {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if n < 0 {
        let e = errno();
        return if e == libc::EINTR { Ok(false) } else { Err(e) };
    }
    Ok(n > 0)
}

/// Stop a child at once and reap it (after a cancel: its result is not wanted).
pub fn kill_child(pid: libc::pid_t) {
    // SAFETY: pid is our child, not yet reaped.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = wait_child(pid);
}

/// Wait for a child and tell whether it exited with status 0.
pub fn wait_child(pid: libc::pid_t) -> bool {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int; pid is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if r < 0 && errno() != libc::EINTR {
            return false;
        }
    }
}

/// Leave a forked child at once, without running destructors or atexit handlers.
pub fn child_exit(code: i32) -> ! {
    // SAFETY: _exit is async-signal-safe and never returns.
    unsafe { libc::_exit(code) }
}
