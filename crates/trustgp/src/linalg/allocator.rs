//! Process-wide allocator settings for programs that build large matrices over and over.
//!
//! Every evaluation of an exact-GP objective allocates a few n×n matrices (the kernel matrix
//! that becomes the Cholesky factor, the inverse and its scratch space) and frees them again.
//! glibc's `malloc` serves blocks above a dynamic threshold with a fresh `mmap` and returns
//! freed memory at the top of its heap to the operating system, so each evaluation page-faults
//! its matrices in again, a page at a time, and the kernel zeroes every page. At n = 2000 that
//! was about a quarter of the time of a fit (`perf stat`: 6× fewer page faults with the settings
//! below; see `docs/benchmarks.md`).

/// The largest block glibc allows `malloc` to serve from its heap (32 MiB on 64-bit targets),
/// instead of mapping fresh pages: an n×n matrix of f64 up to n = 2048.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HEAP_BLOCK_MAX: libc::c_int = 32 << 20;

/// Freed memory glibc keeps at the top of its heap instead of returning it (1 GiB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_FREED: libc::c_int = 1 << 30;

/// Lets freed matrices be reused by the next allocation instead of being returned to the
/// operating system and faulted in again. Call once, at the start of a program, before other
/// threads start; it affects the whole process (it is a setting of the C allocator), which is
/// why the library never calls it by itself.
///
/// On glibc (Linux) this sets `M_MMAP_THRESHOLD` to 32 MiB and `M_TRIM_THRESHOLD` to 1 GiB, so
/// a process may hold up to 1 GiB of freed memory for reuse until it exits. Elsewhere it does
/// nothing. Returns whether both settings were accepted.
pub fn reuse_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only changes two numeric thresholds of glibc's allocator; it
        // takes no pointers and is documented as safe to call at any time (glibc serialises
        // it against concurrent allocation). Both values are within the accepted ranges.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_BLOCK_MAX) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREED) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
