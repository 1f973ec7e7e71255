//! The one error type of the core: a flat enum whose messages name what was wrong.

use std::fmt;

/// Everything the core can refuse. Waiting is never an error: a wait is a [`crate::Decision`].
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// A rate (`field`) was NaN, infinite, zero or negative.
    InvalidRate {
        /// The configuration field, in the JS spelling (`ratePerSec`).
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A burst capacity (`field`) was NaN, infinite or below 1 (a bucket that can never hold one token).
    InvalidCapacity {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A duration in seconds (`field`) was NaN, infinite, negative, zero where zero is meaningless, or too large.
    InvalidDuration {
        /// The configuration field.
        field: &'static str,
        /// The value given, in seconds.
        value: f64,
        /// What the field accepts.
        expected: &'static str,
    },
    /// A share (`field`) was NaN or outside 0 to 1.
    InvalidShare {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A count (`field`) was out of its range (a quota of zero requests, a host bound of zero…).
    InvalidCount {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: u64,
        /// What the field accepts.
        expected: &'static str,
    },
    /// A URL could not be parsed, or names no host.
    InvalidUrl {
        /// The input, truncated to 200 characters.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// The registry holds its maximum number of hosts and none can be evicted without losing state.
    RegistryFull {
        /// The configured bound.
        max_hosts: usize,
    },
    /// A snapshot could not be restored.
    InvalidSnapshot {
        /// Why it was refused.
        reason: String,
    },
    /// An instant a caller passed (`field`) is further than [`crate::MAX_CLOCK_GAP`] from the limiter's own clock.
    FarFromClock {
        /// The argument, in the JS spelling (`nowMs`).
        field: &'static str,
        /// The instant given, in milliseconds.
        given_ms: f64,
        /// The limiter's clock then, in milliseconds.
        clock_ms: f64,
    },
    /// An operator's rule could not be set: its pattern, or what is wrong with it.
    InvalidRule {
        /// The pattern given, truncated to 200 characters.
        pattern: String,
        /// Why it was refused.
        reason: String,
    },
    /// An operator's rule blocks the host: nothing is reserved for it, nor sent there.
    HostBlocked {
        /// The host key.
        host: String,
        /// The rule's reason.
        reason: String,
    },
    /// A policy groups hosts by site ([`crate::GroupBy::Site`]) and no Public Suffix List is set
    /// ([`crate::set_public_suffix_list`]; in WebAssembly the shell sets one).
    NoPublicSuffixList,
    /// Something this build does not do (`what`).
    Unsupported {
        /// What was asked.
        what: &'static str,
    },
    /// The host kept pushing back (429/503) for [`crate::GIVE_UP_AFTER`]: nothing is reserved for it, nor sent
    /// there, until `until_ms`.
    HostGivenUp {
        /// The host key.
        host: String,
        /// When it may be asked again, in milliseconds on the caller's clock.
        until_ms: f64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidRate { field, value } => {
                write!(f, "invalid {field}: {} (expected a finite number of requests per second > 0)", Num(*value))
            }
            Error::InvalidCapacity { field, value } => {
                write!(f, "invalid {field}: {} (expected a finite number >= 1)", Num(*value))
            }
            Error::InvalidDuration { field, value, expected } => {
                write!(f, "invalid {field}: {} (expected {expected})", Num(*value))
            }
            Error::InvalidShare { field, value } => {
                write!(f, "invalid {field}: {} (expected a number from 0 to 1)", Num(*value))
            }
            Error::InvalidCount { field, value, expected } => {
                write!(f, "invalid {field}: {value} (expected {expected})")
            }
            Error::InvalidUrl { input, reason } => write!(f, "invalid URL {}: {reason}", Quoted(input)),
            Error::RegistryFull { max_hosts } => write!(
                f,
                "host registry is full ({max_hosts} hosts) and every host holds state that eviction would lose"
            ),
            Error::InvalidSnapshot { reason } => write!(f, "invalid snapshot: {reason}"),
            Error::InvalidRule { pattern, reason } => write!(f, "invalid rule {}: {reason}", Quoted(pattern)),
            Error::HostBlocked { host, reason } => write!(f, "host {host} is blocked: {reason}"),
            Error::Unsupported { what } => write!(f, "not supported: {what}"),
            Error::NoPublicSuffixList => {
                f.write_str("groupBy 'site' needs a Public Suffix List, and none is set (set_public_suffix_list)")
            }
            Error::FarFromClock { field, given_ms, clock_ms } => write!(
                f,
                "invalid {field}: {} ms is more than 24 hours from this limiter's clock, {} ms (epoch milliseconds, as \
                 performance.timeOrigin + performance.now()); pass instants of that clock, or only instants of your \
                 own to a limiter that never reads its clock",
                Num(*given_ms),
                Num(*clock_ms)
            ),
            Error::HostGivenUp { host, until_ms } => write!(
                f,
                "host {} kept pushing back (429/503) too long: given up on until {} ms",
                Quoted(host),
                Num(*until_ms)
            ),
        }
    }
}

impl std::error::Error for Error {}

/// A string for messages, in double quotes with quotes, backslashes and control characters escaped: `{:?}`.
pub(crate) struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

/// A float for messages, as JavaScript spells it (`NaN`, `Infinity`), rounded to 6 decimals, and from 1e18 on as
/// its order of magnitude (beyond what any knob accepts, and short).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_nan() {
            return f.write_str("NaN");
        }
        if v.is_infinite() {
            return f.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        }
        let sign = if v < 0.0 { "-" } else { "" };
        let a = v.abs();
        if a >= 1e18 {
            return write!(f, "{sign}1e{}", a.log10().floor());
        }
        // the shortest text that reads back as the value rounded to micro-units (no exponent below 1e18); from
        // 2^52 micro-units on, the value itself (a float that large has no more than 6 decimals, and rounding
        // through micro-units could land on a neighbouring float)
        let shown = if a < 4.5e9 { (a * 1e6).round() / 1e6 } else { a };
        write!(f, "{sign}{shown}")
    }
}

/// Shorten untrusted input before it goes into an error message.
pub(crate) fn clip(input: &str) -> String {
    const MAX: usize = 200;
    if input.len() <= MAX {
        return input.to_owned();
    }
    let mut end = MAX;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &input[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_read_like_debug_output() {
        for s in [
            "",
            "http://a b/",
            "tab\there",
            "quote\"back\\slash",
            "caf\u{e9}",
            "\u{1F600}",
            "nul\0",
            "bel\u{7}",
            "\r\n",
        ] {
            assert_eq!(Quoted(s).to_string(), format!("{s:?}"));
        }
    }

    #[test]
    fn numbers_in_messages_read_like_javascript_numbers() {
        let table = [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.0, "0"),
            (-1.0, "-1"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (31536000.0, "31536000"),
            (1e300, "1e300"),
            (-0.000_000_1, "-0"),
            (1_234_567.000_000_4, "1234567"),
            // past the micro-units a u64 holds
            (2e13, "20000000000000"),
            (-1e16, "-10000000000000000"),
            (123_456_789_012_345.67, "123456789012345.67"),
            (1e17, "100000000000000000"),
            (4_499_999_999.123_456, "4499999999.123456"),
        ];
        for (v, text) in table {
            assert_eq!(Num(v).to_string(), text);
        }
    }
}
