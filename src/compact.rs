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

/// The first token of an encoded snapshot.
pub(crate) const MAGIC: &str = "hostpace-snapshot-1";

/// The first token of a host's record (see [`crate::registry`]'s `host_record`): a short one, as a shared store
/// keeps a record per host.
pub(crate) const RECORD_MAGIC: &str = "hpr";

/// Writes tokens.
pub(crate) struct Writer {
    out: String,
    /// Zeros written and not yet put in `out` (a run is written as one token).
    zeros: u64,
    /// The instant later instants are written from (see [`Writer::set_base`]).
    base: Option<Instant>,
    /// Whether a number ending in three zeros or more is written in short (`36e11`; a record's form).
    short: bool,
}

impl Writer {
    pub(crate) fn new() -> Writer {
        Writer::with(MAGIC, false)
    }

    /// A writer of a host's record: [`RECORD_MAGIC`], and round numbers in short.
    pub(crate) fn record() -> Writer {
        Writer::with(RECORD_MAGIC, true)
    }

    fn with(magic: &str, short: bool) -> Writer {
        // room for a host's record without growing
        let mut out = String::with_capacity(160);
        out.push_str(magic);
        Writer { out, zeros: 0, base: None, short }
    }

    /// Write the zeros of a run.
    fn flush(&mut self) {
        match std::mem::take(&mut self.zeros) {
            0 => {}
            1 => self.out.push_str(" 0"),
            run => {
                self.out.push_str(" ~");
                self.digits(run);
            }
        }
    }

    /// `v` in decimal (what `write!` makes, without the formatting machinery: a record is mostly numbers).
    fn digits(&mut self, mut v: u64) {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        loop {
            at -= 1;
            buf[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // ASCII digits: always UTF-8
        self.out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
    }

    #[inline(never)]
    pub(crate) fn u64(&mut self, v: u64) {
        if v == 0 {
            self.zeros += 1;
            return;
        }
        self.flush();
        self.out.push(' ');
        let mut zeros = 0;
        let mut mantissa = v;
        while self.short && mantissa % 10 == 0 {
            mantissa /= 10;
            zeros += 1;
        }
        if zeros >= 3 {
            self.digits(mantissa);
            self.out.push('e');
            self.digits(zeros);
        } else {
            self.digits(v);
        }
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
                self.out.push_str(" -");
                self.digits(base.nanos_since(at));
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
        self.out.push(' ');
        self.digits(s.len() as u64);
        self.out.push(':');
        self.out.push_str(s);
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
    /// Whether numbers may be written in short ([`Writer::record`]).
    short: bool,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Result<Reader<'a>, Error> {
        Reader::with(text, MAGIC, false)
    }

    /// A reader of a host's record ([`Writer::record`]).
    pub(crate) fn record(text: &'a str) -> Result<Reader<'a>, Error> {
        Reader::with(text, RECORD_MAGIC, true)
    }

    fn with(text: &'a str, magic: &str, short: bool) -> Result<Reader<'a>, Error> {
        let rest = text.trim_ascii_start().strip_prefix(magic).ok_or_else(|| Error::InvalidSnapshot {
            reason: format!("not a hostpace snapshot (expected it to start with {})", Quoted(magic)),
        })?;
        Ok(Reader { rest, error: None, zeros: 0, base: None, short })
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
        let bytes = self.rest.as_bytes();
        let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        let end = bytes[start..].iter().position(|&b| b == b' ').map_or(bytes.len(), |len| start + len);
        let token = &self.rest[start..end];
        self.rest = &self.rest[end..];
        match token.strip_prefix('~').map(digits) {
            Some(Some(run)) if run >= 2 => {
                self.zeros = run - 1;
                "0"
            }
            Some(_) => "~",
            None => token,
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
            None => self.number(token).and_then(|d| if d == 0 { Some(0) } else { base.as_nanos().checked_add(d - 1) }),
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
        self.number(token).unwrap_or_else(|| {
            self.fail(what);
            0
        })
    }

    /// A number token: decimal digits, or in a record also `<digits>e<digits>` (the first times ten to the
    /// second, when it fits).
    fn number(&self, token: &str) -> Option<u64> {
        let (mantissa, at) = leading_digits(token.as_bytes())?;
        match token.as_bytes().get(at) {
            None => Some(mantissa),
            Some(b'e') if self.short => {
                let zeros = u32::try_from(digits(&token[at + 1..])?).ok()?;
                mantissa.checked_mul(10u64.checked_pow(zeros)?)
            }
            Some(_) => None,
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
    match leading_digits(token.as_bytes())? {
        (v, at) if at == token.len() => Some(v),
        _ => None,
    }
}

/// The number the decimal digits `bytes` starts with (one at least, and it fits), and where they end.
fn leading_digits(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut at = 0;
    while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        at += 1;
    }
    (at > 0).then_some((v, at))
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

    #[test]
    fn a_record_writes_round_numbers_in_short() {
        let numbers = [1, 10, 100, 999, 1000, 3_600_000_000_000, 1_000_000_000_000_000_000, u64::MAX, 120_000];
        let mut w = Writer::record();
        for n in numbers {
            w.u64(n);
        }
        w.set_base(Instant::from_secs(1));
        w.instant(Instant::from_secs(1).add_nanos(999));
        let text = w.finish();
        assert_eq!(
            text,
            format!("{RECORD_MAGIC} 1 10 100 999 1e3 36e11 1e18 {} 12e4 1e3", u64::MAX),
            "shorter only from three zeros on"
        );
        let mut r = Reader::record(&text).unwrap();
        for n in numbers {
            assert_eq!(r.u64("n"), n);
        }
        r.set_base(Instant::from_secs(1));
        assert_eq!(r.instant("at"), Instant::from_secs(1).add_nanos(999));
        assert!(r.finish().is_ok());
        // too large, or not numbers; and no short numbers in a snapshot, nor a snapshot's magic in a record
        for garbage in ["2e19", "1e20", "e3", "3e", "1e-3", "1ee3", "1e3e3", "+1e3", "1e 3"] {
            let text = format!("{RECORD_MAGIC} {garbage}");
            let mut r = Reader::record(&text).unwrap();
            r.u64("n");
            assert!(r.finish().is_err(), "{garbage:?}");
        }
        let mut r = Reader::new("hostpace-snapshot-1 1e3").unwrap();
        r.u64("n");
        assert!(r.finish().is_err());
        assert!(Reader::record("hostpace-snapshot-1 1").is_err());
        assert!(Reader::new(&format!("{RECORD_MAGIC} 1")).is_err());
    }
}
