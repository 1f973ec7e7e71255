//! A compact text encoding of snapshots: whitespace-separated unsigned integers and length-prefixed strings.
//!
//! Why not JSON: instants are u64 nanoseconds since the epoch (beyond the 2^53 that JS numbers hold exactly), and
//! a JSON library is the largest part of a wasm module that must stay small. Floats are written as their IEEE
//! bits, so a round trip is exact. The format is versioned by its first token.
//!
//! Two forms keep a text short (a store shared by a fleet keeps one per host): a run of `k` zeros is written
//! `~k`, and once a text names its base instant ([`Writer::set_base`]), instants are written from it: `0` for
//! [`Instant::ZERO`] (never), `d + 1` for `d` nanoseconds at or after it, `-d` for `d` before it. A text without a
//! base writes instants as nanoseconds since the epoch, as the format's earlier versions did.

use crate::error::{Error, Quoted};
use crate::time::Instant;
use std::fmt::Write;

/// The first token of an encoded snapshot.
pub(crate) const MAGIC: &str = "hostpace-snapshot-1";

/// Writes tokens.
pub(crate) struct Writer {
    out: String,
    /// Zeros written and not yet put in `out` (a run is written as one token).
    zeros: u64,
    /// The instant later instants are written from (see [`Writer::set_base`]).
    base: Option<Instant>,
}

impl Writer {
    pub(crate) fn new() -> Writer {
        Writer { out: String::from(MAGIC), zeros: 0, base: None }
    }

    /// Write the zeros of a run.
    fn flush(&mut self) {
        // writing to a String cannot fail
        let _ = match std::mem::take(&mut self.zeros) {
            0 => Ok(()),
            1 => write!(self.out, " 0"),
            run => write!(self.out, " ~{run}"),
        };
    }

    #[inline(never)]
    pub(crate) fn u64(&mut self, v: u64) {
        if v == 0 {
            self.zeros += 1;
            return;
        }
        self.flush();
        let _ = write!(self.out, " {v}");
    }

    /// From now on, write instants from `base` (already written, as the reader must know it first). A base of
    /// [`Instant::ZERO`] changes nothing.
    pub(crate) fn set_base(&mut self, base: Instant) {
        self.base = (base > Instant::ZERO).then_some(base);
    }

    /// An instant: from the base when there is one, else in nanoseconds since the epoch.
    #[inline(never)]
    pub(crate) fn instant(&mut self, at: Instant) {
        match self.base {
            Some(base) if at > Instant::ZERO && at < base => {
                self.flush();
                let _ = write!(self.out, " -{}", base.nanos_since(at));
            }
            // at most u64::MAX - 1 from a base above ZERO: the token fits
            Some(base) if at > Instant::ZERO => self.u64(at.nanos_since(base) + 1),
            _ => self.u64(at.as_nanos()),
        }
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
        self.flush();
        let _ = write!(self.out, " {}:{s}", s.len());
    }

    pub(crate) fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

/// Reads tokens written by [`Writer`]. Errors are sticky: after the first one every read returns a default
/// and [`Reader::finish`] reports the first (one check instead of one per field keeps the decoder small).
pub(crate) struct Reader<'a> {
    rest: &'a str,
    error: Option<Error>,
    /// Zeros of a run still to be read.
    zeros: u64,
    /// The instant instants are read from (see [`Writer::set_base`]).
    base: Option<Instant>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Result<Reader<'a>, Error> {
        let rest = text.trim_ascii_start().strip_prefix(MAGIC).ok_or_else(|| Error::InvalidSnapshot {
            reason: format!("not a hostpace snapshot (expected it to start with {})", Quoted(MAGIC)),
        })?;
        Ok(Reader { rest, error: None, zeros: 0, base: None })
    }

    /// From now on, read instants from `base` ([`Writer::set_base`]).
    pub(crate) fn set_base(&mut self, base: Instant) {
        self.base = (base > Instant::ZERO).then_some(base);
    }

    /// The next token (a zero of a run counts as one).
    fn token(&mut self) -> &'a str {
        if self.zeros > 0 {
            self.zeros -= 1;
            return "0";
        }
        let rest = self.rest.trim_start_matches(' ');
        let end = rest.find(' ').unwrap_or(rest.len());
        self.rest = &rest[end..];
        match rest[..end].strip_prefix('~').map(|run| run.parse::<u64>()) {
            Some(Ok(run)) if run >= 2 => {
                self.zeros = run - 1;
                "0"
            }
            Some(_) => "~",
            None => &rest[..end],
        }
    }

    /// An instant written by [`Writer::instant`].
    #[inline(never)]
    pub(crate) fn instant(&mut self, what: &str) -> Instant {
        let Some(base) = self.base else {
            return Instant::from_nanos(self.u64(what));
        };
        let token = self.token();
        let at = match token.strip_prefix('-') {
            Some(before) => digits(before).and_then(|d| base.as_nanos().checked_sub(d)).filter(|&at| at > 0),
            None => digits(token).and_then(|d| if d == 0 { Some(0) } else { base.as_nanos().checked_add(d - 1) }),
        };
        at.map(Instant::from_nanos).unwrap_or_else(|| {
            self.fail(what);
            Instant::ZERO
        })
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
        let token = self.token();
        digits(token).unwrap_or_else(|| {
            self.fail(what);
            0
        })
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
        if self.zeros > 0 {
            self.fail(what);
            return "";
        }
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
        if self.zeros == 0 && self.rest.trim_ascii().is_empty() {
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

/// A token of decimal digits as a number (no sign, no other character).
fn digits(token: &str) -> Option<u64> {
    token.parse::<u64>().ok().filter(|_| token.bytes().all(|b| b.is_ascii_digit()))
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
        // runs of zeros, and instants from a base (before it, at it, after it, never, the end of time)
        let base = Instant::from_secs(1_000);
        let instants = [Instant::from_secs(999), base, Instant::from_secs(1_001), Instant::ZERO, Instant::MAX];
        let mut w = Writer::new();
        w.u64(7);
        for _ in 0..5 {
            w.u64(0);
        }
        w.u64(base.as_nanos());
        w.set_base(base);
        for at in instants {
            w.instant(at);
        }
        w.u64(0);
        w.str("s");
        w.u64(0);
        w.u64(0);
        let text = w.finish();
        assert!(text.contains(" 7 ~5 "), "{text}");
        assert!(text.contains(" -1000000000 1 1000000001 0 "), "{text}");
        let mut r = Reader::new(&text).unwrap();
        assert_eq!(r.u64("n"), 7);
        for _ in 0..5 {
            assert_eq!(r.u64("zero"), 0);
        }
        let read_base = Instant::from_nanos(r.u64("base"));
        r.set_base(read_base);
        for at in instants {
            assert_eq!(r.instant("at"), at);
        }
        assert_eq!((r.u64("zero"), r.str("s"), r.u64("zero"), r.u64("zero")), (0, "s", 0, 0));
        assert!(r.finish().is_ok());
        for garbage in [" ~1", " ~x", " ~", " 1 -5"] {
            let text = format!("{MAGIC}{garbage}");
            let mut r = Reader::new(&text).unwrap();
            let read_base = Instant::from_nanos(r.u64("base").max(1));
            r.set_base(read_base);
            r.instant("at");
            assert!(r.finish().is_err(), "{garbage:?}");
        }
        // a run cut short by a string, or left unread, is malformed
        let mut r = Reader::new("hostpace-snapshot-1 ~3 1:s").unwrap();
        assert_eq!(r.u64("zero"), 0);
        r.str("s");
        assert!(r.finish().is_err());
        let mut r = Reader::new("hostpace-snapshot-1 ~3").unwrap();
        r.u64("zero");
        assert!(r.finish().is_err());
        let mut r = Reader::new("hostpace-snapshot-1").unwrap();
        r.u64("count");
        assert!(r.failed());
        assert!(r.finish().unwrap_err().to_string().contains("expected count"));
    }
}
