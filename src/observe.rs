//! Learning from responses: cooldowns from 429/503 and Retry-After, the server's published limits, robots.txt
//! Crawl-delay, adaptive pacing, and the bounded retry policy. Sans-I/O like the rest of the core: the shell
//! passes what it received and the instant it received it.

use crate::host::HostState;
use crate::policy::{Limits, Policy, MIN_RATE_PER_SEC};
use crate::response::{has_rate_limit_fields, parse_rate_limit, parse_retry_after, HeaderError};
use crate::robots::crawl_delay;
use crate::time::{duration_nanos, nanos_to_ms as ms, Instant};
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    /// The wall clock in epoch milliseconds, to resolve HTTP-dates when the response has no `Date` header.
    pub wall_now_ms: Option<u64>,
}

impl Response<'_> {
    /// Whether observing this response can change a host's state under `policy`: a 429 or 503, RateLimit fields,
    /// or (with adaptive pacing) a measured latency on an answer below 500. Observing any other response changes
    /// nothing, so a shell may skip reporting it (the gateway saves an object call per plain success).
    pub fn teaches(&self, policy: &Policy) -> bool {
        self.status == 429
            || self.status == 503
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
    headers.iter().find(|(n, _)| n.trim().eq_ignore_ascii_case(name)).map(|&(_, v)| v)
}

/// The response's Retry-After as a wait, if the header is there: resolved against its own `Date` header, else the
/// wall clock.
fn retry_after_of(r: &Response<'_>) -> Option<Result<Duration, HeaderError>> {
    let value = header(r.headers, "retry-after")?;
    Some(parse_retry_after(value, header(r.headers, "date"), r.wall_now_ms))
}

impl HostState {
    fn rate_and_capacity(&self, limits: &Limits) -> (f64, f64) {
        (self.rate_per_sec(limits), self.bucket.capacity())
    }

    fn widen(&mut self, limits: &Limits) {
        if let Some(a) = limits.adaptive {
            let level = (f64::from(self.rate_level) + a.step).min(limits.rate_per_sec);
            self.rate_level = level as f32;
        }
    }

    fn narrow(&mut self, limits: &Limits) {
        if let Some(a) = limits.adaptive {
            let level = (f64::from(self.rate_level) / 2.0).max(a.min_rate);
            self.rate_level = level as f32;
        }
    }

    /// Learn from what came back for a request to this host, at `now` (when the response arrived).
    ///
    /// - 429 and 503: cooldown until `now + min(Retry-After, maxBackoffSec)`; Retry-After in delay-seconds or
    ///   HTTP-date form (resolved against the response's `Date`); missing or unparsable → `defaultRetryAfterSec`
    ///   (the unparsable value is reported in [`Observation::ignored`]); past or negative → 0, which still
    ///   leaves the other layers in force (the bucket restarts empty: no retry storm). Retry-After wins over
    ///   RateLimit fields on the same response.
    /// - `RateLimit` / `RateLimit-Policy` / `X-RateLimit-*` (ignored when `Age` > 0): remaining 0 → nothing
    ///   departs until the reset (capped by `maxBackoffSec`; layer `serverQuota`); a policy of q per w caps the
    ///   host's rate at q/w (never raises it above the configuration).
    /// - adaptive pacing: a 429/503/timeout or a response slower than the target narrows; a faster success
    ///   widens.
    pub fn observe(&mut self, limits: &Limits, outcome: &Outcome<'_>, now: Instant) -> Observation {
        let before = self.rate_and_capacity(limits);
        let mut obs = Observation::default();
        match outcome {
            Outcome::Timeout => self.narrow(limits),
            Outcome::Response(r) => {
                let throttled = r.status == 429 || r.status == 503;
                let mut retry_after = None;
                if throttled {
                    match retry_after_of(r) {
                        Some(Ok(wait)) => retry_after = Some(wait),
                        Some(Err(e)) => obs.ignored.push(e.to_string()),
                        None => {}
                    }
                    obs.retry_after_ms = retry_after.map(|d| ms(duration_nanos(d)));
                    obs.cooldown_until = Some(self.throttle(limits, retry_after, now));
                    self.narrow(limits);
                }
                if retry_after.is_none() {
                    self.learn_server_limits(limits, r, now, &mut obs);
                }
                if !throttled && r.status < 500 {
                    match r.latency {
                        Some(l) if duration_nanos(l) <= limits.adaptive.map_or(0, |a| a.target_latency_ns) => {
                            self.widen(limits)
                        }
                        Some(_) => self.narrow(limits),
                        None => {}
                    }
                }
            }
        }
        self.retune(limits);
        let after = self.rate_and_capacity(limits);
        obs.rate_per_sec = (before.0, after.0);
        obs.burst_capacity = (before.1, after.1);
        obs
    }

    fn learn_server_limits(&mut self, limits: &Limits, r: &Response<'_>, now: Instant, obs: &mut Observation) {
        let server = parse_rate_limit(r.headers, r.wall_now_ms);
        obs.ignored.extend(server.ignored.iter().map(HeaderError::to_string));
        if server.remaining == Some(0) {
            if let Some(reset) = server.reset {
                let until = now.add_nanos(duration_nanos(reset).min(limits.max_backoff_ns));
                self.server_quota_until(until);
                obs.server_quota_until = Some(self.server_until);
            }
        }
        if let Some(policy) = server.policy {
            if let Some(window) = policy.window_sec.filter(|&w| w > 0) {
                if policy.quota > 0 {
                    let cap = (policy.quota as f64 / window as f64).clamp(MIN_RATE_PER_SEC, limits.rate_per_sec);
                    self.server_cap = cap as f32;
                    obs.server_rate_cap = Some(cap);
                }
            }
        }
    }

    /// Set the robots.txt Crawl-delay for this host (`None`: no rule). The interval floor becomes
    /// `max(configured floor, min(delay, maxCrawlDelaySec))`: a Crawl-delay may raise the floor, never lower it.
    pub fn set_crawl_delay(&mut self, limits: &Limits, delay: Option<Duration>) -> RobotsOutcome {
        let requested = delay.map(duration_nanos);
        let applied = requested.unwrap_or(0).min(limits.max_crawl_delay_ns);
        // whole milliseconds, rounded up, so the floor is never undercut
        self.crawl_delay_ms = u32::try_from(applied.div_ceil(1_000_000)).unwrap_or(u32::MAX);
        let interval = self.floor_ns(limits);
        self.set_interval_ns(interval);
        RobotsOutcome {
            requested_ms: requested.map(ms),
            interval_ms: ms(interval),
            capped: requested.is_some_and(|r| r > limits.max_crawl_delay_ns),
            cooldown_until: None,
        }
    }

    /// Learn from a robots.txt fetch: 2xx → its Crawl-delay for `user_agent` (RFC 9309 group matching);
    /// other 4xx → no delay rule; 429 and 5xx → back off the host like a throttled response (Retry-After or the
    /// default), keeping any delay already known.
    pub fn observe_robots(
        &mut self,
        limits: &Limits,
        response: &Response<'_>,
        body: &str,
        user_agent: &str,
        now: Instant,
    ) -> RobotsOutcome {
        match response.status {
            200..=299 => self.set_crawl_delay(limits, crawl_delay(body, user_agent)),
            429 | 500..=599 => {
                let retry = retry_after_of(response).and_then(Result::ok);
                let until = self.throttle(limits, retry, now);
                RobotsOutcome {
                    requested_ms: None,
                    interval_ms: ms(self.interval_ns()),
                    capped: false,
                    cooldown_until: Some(until),
                }
            }
            400..=499 => self.set_crawl_delay(limits, None),
            _ => RobotsOutcome { interval_ms: ms(self.interval_ns()), ..RobotsOutcome::default() },
        }
    }
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

    /// What to do when attempt number `attempt` (from 1) of a request under `max_retries` answered `status`.
    pub fn verdict(max_retries: u32, attempt: u32, status: u16) -> RetryVerdict {
        if status != 429 && status != 503 {
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
