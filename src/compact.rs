//! A compact text encoding of snapshots: whitespace-separated unsigned integers and length-prefixed strings.
//!
//! Why not JSON: instants are u64 nanoseconds since the epoch (beyond the 2^53 that JS numbers hold exactly), and
//! a JSON library is the largest part of a wasm module that must stay small. Floats are written as their IEEE
//! bits, so a round trip is exact. The format is versioned by its first token.

use crate::error::Error;
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

/// Reads tokens written by [`Writer`]; every error says what was expected.
pub(crate) struct Reader<'a> {
    rest: &'a str,
}

#[cold]
#[inline(never)]
fn bad(what: &str) -> Error {
    Error::InvalidSnapshot { reason: format!("malformed: expected {what}") }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Result<Reader<'a>, Error> {
        let rest = text.trim_start().strip_prefix(MAGIC).ok_or_else(|| Error::InvalidSnapshot {
            reason: format!("not a hostpace snapshot (expected it to start with {MAGIC:?})"),
        })?;
        Ok(Reader { rest })
    }

    #[inline(never)]
    fn token(&mut self, what: &str) -> Result<&'a str, Error> {
        let rest = self.rest.trim_start_matches(' ');
        if rest.is_empty() {
            return Err(bad(what));
        }
        let end = rest.find(' ').unwrap_or(rest.len());
        self.rest = &rest[end..];
        Ok(&rest[..end])
    }

    #[inline(never)]
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let t = self.token(what)?;
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(what));
        }
        t.parse().map_err(|_| bad(what))
    }

    #[inline(never)]
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, Error> {
        u32::try_from(self.u64(what)?).map_err(|_| bad(what))
    }

    #[inline(never)]
    pub(crate) fn f64(&mut self, what: &str) -> Result<f64, Error> {
        Ok(f64::from_bits(self.u64(what)?))
    }

    #[inline(never)]
    pub(crate) fn f32(&mut self, what: &str) -> Result<f32, Error> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    #[inline(never)]
    pub(crate) fn bool(&mut self, what: &str) -> Result<bool, Error> {
        match self.u64(what)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad(what)),
        }
    }

    #[inline(never)]
    pub(crate) fn str(&mut self, what: &str) -> Result<&'a str, Error> {
        let rest = self.rest.trim_start_matches(' ');
        let colon = rest.find(':').ok_or_else(|| bad(what))?;
        let len: usize = rest[..colon].parse().map_err(|_| bad(what))?;
        let body = rest.get(colon + 1..colon + 1 + len).ok_or_else(|| bad(what))?;
        self.rest = &rest[colon + 1 + len..];
        Ok(body)
    }

    pub(crate) fn end(&self) -> Result<(), Error> {
        if self.rest.trim().is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidSnapshot { reason: "malformed: unexpected data after the last host".into() })
        }
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
        assert_eq!(r.u64("n").unwrap(), u64::MAX);
        assert_eq!(r.str("s").unwrap(), "a b:c");
        assert!(r.f64("f").unwrap().is_nan());
        assert!(r.bool("b").unwrap());
        assert!(r.end().is_ok());
        assert!(r.u64("more").is_err());
        for garbage in ["", "{}", "hostpace-snapshot-1 x", "hostpace-snapshot-1 -1", "hostpace-snapshot-1 99:ab"] {
            let err = Reader::new(garbage).and_then(|mut r| r.u64("n").and_then(|_| r.str("s").map(|_| ())));
            assert!(err.is_err(), "{garbage:?}");
        }
    }
}
