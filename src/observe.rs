//! What a shell reports and what it is told back: the responses pacing listens to ([`Outcome`], [`Response`]),
//! what an observation changed ([`Observation`], [`RobotsOutcome`]), and the bounded retry policy
//! ([`RetryBudget`]). Sans-I/O like the rest of the core: the shell passes what it received and the instant it
//! received it; what a host learns from it is the host state's own.

use crate::policy::Policy;
use crate::response::{has_rate_limit_fields, parse_retry_after, HeaderError};
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a request was for: the answers that mean "too fast" differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A request of the crawler's.
    Request,
    /// The host's robots.txt.
    Robots,
}

/// Whether an answer of `status` to a request for `purpose` is the host pushing back (a cooldown, held departures,
/// a slower pace; see [`crate::HostState::throttle`]): 429 and 503 to any request, and every 5xx to robots.txt (RFC
/// 9309: a file the server fails to give means the host is in trouble: back off).
pub fn pushes_back(status: u16, purpose: Purpose) -> bool {
    match purpose {
        Purpose::Request => status == 429 || status == 503,
        Purpose::Robots => status == 429 || status >= 500,
    }
}

/// What came back for one request.
#[derive(Clone, Copy, Debug)]
pub enum Outcome<'a> {
    /// An HTTP response.
    Response(Response<'a>),
    /// No response: a timeout or a failed connection. Narrows an adaptive host; nothing else.
    Timeout,
}

/// The parts of an HTTP response that pacing listens to.
#[derive(Clone, Copy, Debug)]
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// Header (name, value) pairs; names in any case.
    pub headers: &'a [(&'a str, &'a str)],
    /// Time from departure to the response's headers, if measured (adaptive pacing needs it to widen).
    pub latency: Option<Duration>,
    /// The wall clock in epoch milliseconds, to resolve HTTP-dates when the response has no `Date` header, and to
    /// place an RFC 850 date's two-digit year in its century.
    pub wall_now_ms: Option<u64>,
}

impl Response<'_> {
    /// Whether observing this response can change a host's state under `policy`: a 429 or 503, RateLimit fields,
    /// or (with adaptive pacing) a measured latency on an answer below 500. Observing any other response changes
    /// nothing, so a shell may skip reporting it (the gateway saves an object call per plain success).
    pub fn teaches(&self, policy: &Policy) -> bool {
        pushes_back(self.status, Purpose::Request)
            || has_rate_limit_fields(self.headers)
            || (policy.adaptive.is_some() && self.status < 500 && self.latency.is_some())
    }
}

/// What an observation changed, so a shell can log why pacing moved. Fields are `None` when unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The response was a 429 or 503: the host cools down until this instant.
    pub cooldown_until: Option<Instant>,
    /// The Retry-After the server asked for, as parsed (before the max-backoff cap).
    pub retry_after_ms: Option<f64>,
    /// The server's published quota is exhausted: nothing departs before this instant.
    pub server_quota_until: Option<Instant>,
    /// The server's published policy caps the host's rate at this many requests per second.
    pub server_rate_cap: Option<f64>,
    /// Rate per second in force before and after (changed by adaptive pacing or a server cap).
    pub rate_per_sec: (f64, f64),
    /// Burst capacity in force before and after.
    pub burst_capacity: (f64, f64),
    /// Header values that were present but unusable (a garbage Retry-After falls back to the policy's default).
    pub ignored: Vec<String>,
}

/// What a robots.txt fetch changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RobotsOutcome {
    /// The Crawl-delay robots.txt asked for this user agent, in milliseconds.
    pub requested_ms: Option<f64>,
    /// The interval floor now in force for the host, in milliseconds.
    pub interval_ms: f64,
    /// True when the requested delay exceeded `maxCrawlDelaySec` and was capped.
    pub capped: bool,
    /// The robots.txt fetch itself was throttled (429/5xx): the host cools down until this instant.
    pub cooldown_until: Option<Instant>,
}

fn header<'a>(headers: &'a [(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.trim_ascii().eq_ignore_ascii_case(name)).map(|&(_, v)| v)
}

/// The response's Retry-After as a wait, if the header is there: resolved against its own `Date` header, else the
/// wall clock.
pub(crate) fn retry_after_of(r: &Response<'_>) -> Option<Result<Duration, HeaderError>> {
    let value = header(r.headers, "retry-after")?;
    Some(parse_retry_after(value, header(r.headers, "date"), r.wall_now_ms))
}

/// What to do after an answer, under the bounded retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RetryVerdict {
    /// Not a 429/503: the answer is final.
    Done,
    /// A 429/503 with retries left: acquire again (the host's cooldown sets the wait) and retry.
    Retry,
    /// A 429/503 and `maxRetries` retries already spent: surface this answer, do not retry.
    GiveUp,
}

/// Counts 429/503 answers for one request. `maxRetries` is the number of *retries*: a request is attempted at
/// most `1 + maxRetries` times, and the last 429/503 is surfaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryBudget {
    max_retries: u32,
    attempts: u32,
}

impl RetryBudget {
    /// A budget of `max_retries` retries.
    pub fn new(max_retries: u32) -> RetryBudget {
        RetryBudget { max_retries, attempts: 0 }
    }

    /// Record an attempt's status and say what to do next.
    pub fn on_status(&mut self, status: u16) -> RetryVerdict {
        self.attempts = self.attempts.saturating_add(1);
        RetryBudget::verdict(self.max_retries, self.attempts, status)
    }

    /// What to do when attempt number `attempt` (from 1) of a request under `max_retries` answered `status`: a
    /// request the host pushed back on ([`pushes_back`]) is retried.
    pub fn verdict(max_retries: u32, attempt: u32, status: u16) -> RetryVerdict {
        if !pushes_back(status, Purpose::Request) {
            RetryVerdict::Done
        } else if attempt > max_retries {
            RetryVerdict::GiveUp
        } else {
            RetryVerdict::Retry
        }
    }

    /// Attempts made so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}
