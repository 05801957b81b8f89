//! Giving freed heap memory back to the system. glibc keeps freed small
//! blocks (under its mmap threshold) in its heap, so a server that once
//! held a huge grid or a long turn in flight keeps that RSS after it has
//! dropped them; `malloc_trim(3)` returns the free pages.

/// Returns the heap's free pages to the system (a no-op off glibc).
pub(crate) fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) only releases free heap pages.
    unsafe {
        libc::malloc_trim(0);
    }
}
