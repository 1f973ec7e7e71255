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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidRate { field, value } => {
                write!(f, "invalid {field}: {value} (expected a finite number of requests per second > 0)")
            }
            Error::InvalidCapacity { field, value } => {
                write!(f, "invalid {field}: {value} (expected a finite number >= 1)")
            }
            Error::InvalidDuration { field, value, expected } => {
                write!(f, "invalid {field}: {value} (expected {expected})")
            }
            Error::InvalidCount { field, value, expected } => {
                write!(f, "invalid {field}: {value} (expected {expected})")
            }
            Error::InvalidUrl { input, reason } => write!(f, "invalid URL {input:?}: {reason}"),
            Error::RegistryFull { max_hosts } => write!(
                f,
                "host registry is full ({max_hosts} hosts) and every host holds state that eviction would lose"
            ),
            Error::InvalidSnapshot { reason } => write!(f, "invalid snapshot: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

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
