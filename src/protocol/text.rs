//! Append-only text shared between the processor and its readers.
//!
//! Every upsert carries an item's *full* accumulated content (DESIGN §3). Cloning a
//! `String` per emission would copy O(n²) bytes over a long message, so an item's
//! text lives in one growing buffer and each emission is a cheap `(buffer, len)`
//! snapshot. Bytes below a snapshot's `len` are never modified, so a snapshot is
//! immutable even while the writer keeps appending.

use std::fmt;
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes written into text buffers (appends plus re-allocation copies), for the
/// processor benchmark's "copying stays linear" figure. Only built with the
/// `bench-counters` feature: a shared atomic on the hot path costs every user.
#[cfg(feature = "bench-counters")]
mod counter {
    use std::sync::atomic::{AtomicU64, Ordering};

    static BYTES_COPIED: AtomicU64 = AtomicU64::new(0);

    pub(super) fn add(n: u64) {
        BYTES_COPIED.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn total() -> u64 {
        BYTES_COPIED.load(Ordering::Relaxed)
    }
}

#[cfg(not(feature = "bench-counters"))]
mod counter {
    #[inline(always)]
    pub(super) fn add(_: u64) {}
}

/// Total bytes copied into `TextBuffer`s since the process started.
#[cfg(feature = "bench-counters")]
pub fn bytes_copied() -> u64 {
    counter::total()
}

/// The writer side: owned by whoever accumulates the text.
#[derive(Debug, Default)]
pub struct TextBuffer {
    buf: Arc<RwLock<String>>,
    len: usize,
}

impl TextBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn from_string(s: String) -> Self {
        counter::add(s.len() as u64);
        let len = s.len();
        Self {
            buf: Arc::new(RwLock::new(s)),
            len,
        }
    }

    /// A writer that goes on from `text`: its own buffer when nothing else
    /// holds it (a freshly decoded one), else a copy. Appending to it then
    /// yields snapshots that `same_buffer` each other, as the processor's do.
    pub(crate) fn from_shared(text: SharedText) -> Self {
        let SharedText { buf, len } = text;
        match Arc::try_unwrap(buf) {
            Ok(lock) => {
                let mut s = lock.into_inner().unwrap_or_else(|e| e.into_inner());
                s.truncate(len);
                Self {
                    buf: Arc::new(RwLock::new(s)),
                    len,
                }
            }
            Err(buf) => {
                let copy = SharedText { buf, len }.with_str(str::to_owned);
                Self::from_string(copy)
            }
        }
    }

    pub fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let mut guard = self.buf.write().unwrap_or_else(|e| e.into_inner());
        let old_cap = guard.capacity();
        guard.push_str(s);
        let realloc = if guard.capacity() != old_cap {
            self.len as u64
        } else {
            0
        };
        counter::add(s.len() as u64 + realloc);
        self.len = guard.len();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Replaces the content. Existing snapshots keep the old text (they own the
    /// old buffer), so this swaps in a fresh buffer rather than rewriting bytes.
    pub fn replace(&mut self, s: String) {
        *self = Self::from_string(s);
    }

    pub fn snapshot(&self) -> SharedText {
        SharedText {
            buf: Arc::clone(&self.buf),
            len: self.len,
        }
    }

    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        self.snapshot().with_str(f)
    }
}

/// The writer is done: nothing will be appended again, while snapshots may
/// keep the text for the rest of the session. Growing by doubling left up to
/// as much spare capacity as text; give it back.
impl Drop for TextBuffer {
    fn drop(&mut self) {
        let mut guard = self.buf.write().unwrap_or_else(|e| e.into_inner());
        if guard.capacity() - guard.len() > guard.len() / 8 {
            guard.shrink_to_fit();
        }
    }
}

/// An immutable view of a `TextBuffer` at one moment.
#[derive(Clone, Default)]
pub struct SharedText {
    buf: Arc<RwLock<String>>,
    len: usize,
}

impl SharedText {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes the shared buffer holds, spare capacity included.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.buf
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .capacity()
    }

    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        let guard = self.buf.read().unwrap_or_else(|e| e.into_inner());
        f(&guard[..self.len])
    }

    /// True when both views share one buffer: the reader can then lay out only
    /// the bytes past what it already has.
    pub fn same_buffer(&self, other: &SharedText) -> bool {
        Arc::ptr_eq(&self.buf, &other.buf)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_str(|s| f.write_str(s))
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_str(|s| fmt::Debug::fmt(s, f))
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        if self.same_buffer(other) {
            return self.len == other.len;
        }
        self.with_str(|a| other.with_str(|b| a == b))
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.with_str(|a| a == *other)
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> Self {
        TextBuffer::from_string(s.to_owned()).snapshot()
    }
}

impl From<String> for SharedText {
    fn from(s: String) -> Self {
        TextBuffer::from_string(s).snapshot()
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with_str(|s| serializer.serialize_str(s))
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SharedText::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_stable_while_appending() {
        let mut buf = TextBuffer::new();
        buf.push_str("hello");
        let a = buf.snapshot();
        buf.push_str(" world");
        let b = buf.snapshot();
        assert_eq!(a, "hello");
        assert_eq!(b, "hello world");
        assert!(a.same_buffer(&b));
    }

    #[test]
    fn finished_text_gives_back_its_spare_capacity() {
        let mut buf = TextBuffer::new();
        for _ in 0..1200 {
            buf.push_str("eight ch");
        }
        let shown = buf.snapshot();
        assert!(shown.capacity() > 9600, "growing leaves spare room");
        drop(buf);
        assert_eq!(shown.capacity(), 9600);
        assert_eq!(shown, "eight ch".repeat(1200).as_str());
    }

    #[test]
    fn replace_leaves_old_snapshots_alone() {
        let mut buf = TextBuffer::new();
        buf.push_str("draft");
        let old = buf.snapshot();
        buf.replace("final".into());
        assert_eq!(old, "draft");
        assert_eq!(buf.snapshot(), "final");
    }
}
