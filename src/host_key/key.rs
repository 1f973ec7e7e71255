//! The key itself: its text, stored inline when short.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The normalized name of a target host: lowercase, IDNA in its ASCII (punycode) form, no trailing dot, IPv6 in
/// brackets, and the port only when it is not the scheme's default. `HTTP://Example.COM.:80/` and
/// `http://example.com/` share the key `example.com`; `https://example.com:8443/` has `example.com:8443`.
///
/// A key of up to [`HostKey::INLINE`] bytes (most host names) is stored inline, in the key itself: comparing two
/// keys then reads no other memory, which is what a registry lookup does on every decision.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostKey(Repr);

/// The key's text: inline (length, bytes zero-padded) when it fits, else on the heap. Which one is decided by the
/// length alone, so equal texts always have equal representations and equal representations are equal texts.
#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Inline(u8, [u8; HostKey::INLINE]),
    Heap(Box<str>),
}

impl Repr {
    fn new(text: &str) -> Repr {
        let bytes = text.as_bytes();
        if bytes.len() <= HostKey::INLINE {
            let mut buf = [0; HostKey::INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            Repr::Inline(bytes.len() as u8, buf)
        } else {
            Repr::Heap(text.into())
        }
    }
}

impl HostKey {
    /// The key of a text already normalized (what a WHATWG parser leaves, checked by the caller).
    pub(super) fn from_normalized(text: &str) -> HostKey {
        HostKey(Repr::new(text))
    }

    /// Keys of up to this many bytes are stored inline (no allocation, no pointer to follow).
    pub const INLINE: usize = 22;

    /// The key as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Repr {
    fn as_str(&self) -> &str {
        match self {
            Repr::Inline(len, buf) => {
                let bytes = &buf[..usize::from(*len).min(HostKey::INLINE)];
                // SAFETY: `Repr::new` copied a whole `&str` (valid UTF-8) of exactly `len` bytes into `buf`.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Heap(text) => text,
        }
    }
}

/// A text kept the way a key's is: inline when it fits in [`HostKey::INLINE`] bytes. The origin cache keeps its
/// origins so: comparing one then reads no memory beyond the cache's own entry.
#[derive(Clone)]
pub(super) struct InlineText(Repr);

impl InlineText {
    pub(super) fn new(text: &str) -> InlineText {
        InlineText(Repr::new(text))
    }

    pub(super) fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for InlineText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl std::hash::Hash for HostKey {
    /// Hashes as its text does, so a table of keys can be searched by a text.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for HostKey {
    fn partial_cmp(&self, other: &HostKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for HostKey {
    fn cmp(&self, other: &HostKey) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Debug for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HostKey").field(&self.as_str()).finish()
    }
}

impl fmt::Display for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<HostKey> for String {
    fn from(k: HostKey) -> String {
        match k.0 {
            Repr::Heap(text) => text.into(),
            inline => HostKey(inline).as_str().to_owned(),
        }
    }
}

/// The hasher of host tables: randomly seeded foldhash natively; in wasm, foldhash seeded from addresses and a
/// counter (what foldhash's own random state falls back to there, without the extra seeding code).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type KeyHasher = foldhash::fast::RandomState;

/// The hasher of host tables (see the native definition).
#[cfg(target_arch = "wasm32")]
#[derive(Clone, Debug)]
pub(crate) struct KeyHasher(foldhash::fast::FixedState);

#[cfg(target_arch = "wasm32")]
impl Default for KeyHasher {
    fn default() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);
        let local = 0u8;
        let heap = Box::new(0u8);
        let seed = (&local as *const u8 as u64).rotate_left(17)
            ^ (&*heap as *const u8 as u64).rotate_left(41)
            ^ COUNTER.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
        KeyHasher(foldhash::fast::FixedState::with_seed(seed))
    }
}

#[cfg(target_arch = "wasm32")]
impl std::hash::BuildHasher for KeyHasher {
    type Hasher = foldhash::fast::FoldHasher<'static>;
    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}
