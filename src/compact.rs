//! A compact text encoding of snapshots: whitespace-separated unsigned integers and length-prefixed strings.
//!
//! Why not JSON: instants are u64 nanoseconds since the epoch (beyond the 2^53 that JS numbers hold exactly), and
//! a JSON library is the largest part of a wasm module that must stay small. Floats are written as their IEEE
//! bits, so a round trip is exact. The format is versioned by its first token.

use crate::error::{Error, Quoted};
use std::fmt::Write;

/// The first token of an encoded snapshot.
pub(crate) const MAGIC: &str = "hostpace-snapshot-1";

/// Writes tokens.
pub(crate) struct Writer {
    out: String,
}

impl Writer {
    pub(crate) fn new() -> Writer {
        Writer { out: String::from(MAGIC) }
    }

    #[inline(never)]
    pub(crate) fn u64(&mut self, v: u64) {
        // writing to a String cannot fail
        let _ = write!(self.out, " {v}");
    }

    pub(crate) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub(crate) fn f32(&mut self, v: f32) {
        self.u64(u64::from(v.to_bits()));
    }

    pub(crate) fn bool(&mut self, v: bool) {
        self.u64(u64::from(v));
    }

    /// A string as `<byte length>:<bytes>`.
    #[inline(never)]
    pub(crate) fn str(&mut self, s: &str) {
        let _ = write!(self.out, " {}:{s}", s.len());
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// Reads tokens written by [`Writer`]. Errors are sticky: after the first one every read returns a default
/// and [`Reader::finish`] reports the first (one check instead of one per field keeps the decoder small).
pub(crate) struct Reader<'a> {
    rest: &'a str,
    error: Option<Error>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Result<Reader<'a>, Error> {
        let rest = text.trim_ascii_start().strip_prefix(MAGIC).ok_or_else(|| Error::InvalidSnapshot {
            reason: format!("not a hostpace snapshot (expected it to start with {})", Quoted(MAGIC)),
        })?;
        Ok(Reader { rest, error: None })
    }

    /// Record that `what` was expected and not found (the first failure is kept).
    #[cold]
    #[inline(never)]
    pub(crate) fn fail(&mut self, what: &str) {
        if self.error.is_none() {
            self.error = Some(Error::InvalidSnapshot { reason: format!("malformed: expected {what}") });
        }
        self.rest = "";
    }

    #[inline(never)]
    pub(crate) fn u64(&mut self, what: &str) -> u64 {
        let rest = self.rest.trim_start_matches(' ');
        let end = rest.find(' ').unwrap_or(rest.len());
        let token = &rest[..end];
        self.rest = &rest[end..];
        match token.parse::<u64>() {
            Ok(v) if token.bytes().all(|b| b.is_ascii_digit()) => v,
            _ => {
                self.fail(what);
                0
            }
        }
    }

    #[inline(never)]
    pub(crate) fn u32(&mut self, what: &str) -> u32 {
        let v = self.u64(what);
        u32::try_from(v).unwrap_or_else(|_| {
            self.fail(what);
            0
        })
    }

    pub(crate) fn f64(&mut self, what: &str) -> f64 {
        f64::from_bits(self.u64(what))
    }

    pub(crate) fn f32(&mut self, what: &str) -> f32 {
        f32::from_bits(self.u32(what))
    }

    #[inline(never)]
    pub(crate) fn bool(&mut self, what: &str) -> bool {
        match self.u64(what) {
            0 => false,
            1 => true,
            _ => {
                self.fail(what);
                false
            }
        }
    }

    #[inline(never)]
    pub(crate) fn str(&mut self, what: &str) -> &'a str {
        let rest = self.rest.trim_start_matches(' ');
        let body = rest.find(':').and_then(|colon| {
            let len: usize = rest[..colon].parse().ok()?;
            let body = rest.get(colon + 1..colon + 1 + len)?;
            Some((body, &rest[colon + 1 + len..]))
        });
        match body {
            Some((body, after)) => {
                self.rest = after;
                body
            }
            None => {
                self.fail(what);
                ""
            }
        }
    }

    /// The first error, or an error if anything is left unread.
    pub(crate) fn finish(self) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.rest.trim_ascii().is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidSnapshot { reason: "malformed: unexpected data after the last host".into() })
        }
    }

    /// The first error so far, if any.
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_an_error() {
        let mut w = Writer::new();
        w.u64(u64::MAX);
        w.str("a b:c");
        w.f64(f64::NAN);
        w.bool(true);
        let text = w.finish();
        let mut r = Reader::new(&text).unwrap();
        assert_eq!(r.u64("n"), u64::MAX);
        assert_eq!(r.str("s"), "a b:c");
        assert!(r.f64("f").is_nan());
        assert!(r.bool("b"));
        assert!(r.finish().is_ok());
        for garbage in ["", "{}", "hostpace-snapshot-1 x", "hostpace-snapshot-1 -1", "hostpace-snapshot-1 1 99:ab"] {
            let err = Reader::new(garbage).and_then(|mut r| {
                r.u64("n");
                r.str("s");
                r.finish()
            });
            assert!(err.is_err(), "{garbage:?}");
        }
        let mut r = Reader::new("hostpace-snapshot-1").unwrap();
        r.u64("count");
        assert!(r.failed());
        assert!(r.finish().unwrap_err().to_string().contains("expected count"));
    }
}
