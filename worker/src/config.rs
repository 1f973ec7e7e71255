//! The gateway's configuration, read from the Worker's `[vars]` (strings; see `wrangler.toml`). The pacing knobs
//! become a core [`Policy`] (validated by the core, errors name the variable); the rest are the gateway's own
//! bounds.

use crate::api::ApiError;
use hostpace::robots::RobotsTiming;
use hostpace::{Policy, Quota};
use std::time::Duration;

/// Every variable the gateway reads, with its default (as written in `wrangler.toml`).
pub const VARS: [(&str, &str); 20] = [
    ("CRAWL_RATE_PER_SEC", "2.0"),
    ("CRAWL_BURST_CAPACITY", "4.0"),
    ("CRAWL_MAX_BACKOFF_SEC", "120"),
    ("CRAWL_MAX_RETRIES", "3"),
    ("CRAWL_MIN_INTERVAL_SEC", "0"),
    ("CRAWL_MAX_CONCURRENCY", "0"),
    ("CRAWL_LEASE_SEC", "60"),
    ("CRAWL_QUOTA_LIMIT", "0"),
    ("CRAWL_QUOTA_WINDOW_SEC", "86400"),
    ("CRAWL_ALLOW_PRIVATE_TARGETS", "false"),
    ("CRAWL_MAX_HOSTS_PER_TOKEN", "10000"),
    ("CRAWL_ROBOTS_TTL_SEC", "86400"),
    ("CRAWL_ROBOTS_RETRY_SEC", "60"),
    ("CRAWL_OBEY_ROBOTS", "true"),
    ("CRAWL_USER_AGENT", "hostpace-gateway/0.1 (+https://example.invalid/hostpace)"),
    ("CRAWL_MAX_WAIT_SEC", "300"),
    ("CRAWL_MAX_BODY_BYTES", "10485760"),
    ("CRAWL_FETCH_TIMEOUT_SEC", "30"),
    ("CRAWL_MAX_CRAWL_DELAY_SEC", "60"),
    ("CRAWL_MAX_RESERVATIONS_PER_TOKEN", "4"),
];

/// The gateway's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    /// The pacing policy of every host (validated).
    pub policy: Policy,
    /// Whether private, loopback and link-local targets are allowed (`CRAWL_ALLOW_PRIVATE_TARGETS`; tests only).
    pub allow_private: bool,
    /// The most hosts one token may create (`CRAWL_MAX_HOSTS_PER_TOKEN`).
    pub max_hosts_per_token: u32,
    /// How long a host's robots.txt is trusted before it is fetched again (at most 24 hours, RFC 9309 §2.4); zero:
    /// never fetched (`CRAWL_ROBOTS_TTL_SEC`).
    pub robots_ttl: Duration,
    /// The first retry of a robots.txt fetch that failed; each failure in a row doubles it, up to an hour
    /// (`CRAWL_ROBOTS_RETRY_SEC`).
    pub robots_retry: Duration,
    /// Whether robots.txt's rules are obeyed: a URL it disallows is refused (403 `disallowed_by_robots`), and so
    /// is every URL of a host whose robots.txt is unreachable (503 `robots_unavailable`) (`CRAWL_OBEY_ROBOTS`).
    pub obey_robots: bool,
    /// The User-Agent sent to targets, and matched against robots.txt groups (`CRAWL_USER_AGENT`).
    pub user_agent: String,
    /// The longest a `/v1/fetch` waits for its departure; longer waits answer 429 at once
    /// (`CRAWL_MAX_WAIT_SEC`).
    pub max_wait: Duration,
    /// The largest response body passed through (`CRAWL_MAX_BODY_BYTES`).
    pub max_body_bytes: u64,
    /// How long an upstream fetch may take to answer (`CRAWL_FETCH_TIMEOUT_SEC`).
    pub fetch_timeout: Duration,
    /// The most departures one token may hold reserved and unconfirmed at one host, from `/v1/fetch` and
    /// `/v1/acquire` (`CRAWL_MAX_RESERVATIONS_PER_TOKEN`).
    pub max_reservations_per_token: u32,
}

fn parse<T: std::str::FromStr>(name: &str, value: &str, what: &str) -> Result<T, ApiError> {
    value
        .trim()
        .parse()
        .map_err(|_| ApiError::new(500, "config_invalid", format!("invalid {name}: {value:?} (expected {what})")))
}

fn boolean(name: &str, value: &str) -> Result<bool, ApiError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" | "" => Ok(false),
        _ => Err(ApiError::new(500, "config_invalid", format!("invalid {name}: {value:?} (expected true or false)"))),
    }
}

fn seconds(name: &str, value: &str) -> Result<Duration, ApiError> {
    let secs: f64 = parse(name, value, "seconds")?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| ApiError::new(500, "config_invalid", format!("invalid {name}: {value:?} (expected seconds >= 0)")))
}

impl GatewayConfig {
    /// Read the configuration through `var` (a variable's value, or `None` when unset: then its default applies).
    /// Errors (500 `config_invalid`) name the variable.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<GatewayConfig, ApiError> {
        let get = |name: &str| -> String {
            var(name).unwrap_or_else(|| VARS.iter().find(|(n, _)| *n == name).map_or("", |(_, d)| d).to_owned())
        };
        let num = |name: &str| -> Result<f64, ApiError> { parse(name, &get(name), "a number") };
        let count = |name: &str| -> Result<u32, ApiError> { parse(name, &get(name), "a whole number") };
        let quota_limit = count("CRAWL_QUOTA_LIMIT")?;
        let policy = Policy {
            rate_per_sec: num("CRAWL_RATE_PER_SEC")?,
            burst_capacity: num("CRAWL_BURST_CAPACITY")?,
            max_backoff_sec: num("CRAWL_MAX_BACKOFF_SEC")?,
            max_retries: count("CRAWL_MAX_RETRIES")?,
            min_interval_sec: num("CRAWL_MIN_INTERVAL_SEC")?,
            max_concurrency: count("CRAWL_MAX_CONCURRENCY")?,
            lease_sec: num("CRAWL_LEASE_SEC")?,
            quota: (quota_limit > 0)
                .then(|| Ok::<_, ApiError>(Quota { limit: quota_limit, window_sec: num("CRAWL_QUOTA_WINDOW_SEC")? }))
                .transpose()?,
            max_crawl_delay_sec: num("CRAWL_MAX_CRAWL_DELAY_SEC")?,
            ..Policy::default()
        };
        policy.limits().map_err(|e| {
            ApiError::new(500, "config_invalid", format!("invalid pacing configuration ([vars] CRAWL_*): {e}"))
        })?;
        let allow_private = boolean("CRAWL_ALLOW_PRIVATE_TARGETS", &get("CRAWL_ALLOW_PRIVATE_TARGETS"))?;
        let max_hosts_per_token = count("CRAWL_MAX_HOSTS_PER_TOKEN")?;
        if max_hosts_per_token == 0 {
            return Err(ApiError::new(500, "config_invalid", "invalid CRAWL_MAX_HOSTS_PER_TOKEN: 0 (expected >= 1)"));
        }
        let user_agent = get("CRAWL_USER_AGENT").trim().to_owned();
        if user_agent.is_empty() || !user_agent.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return Err(ApiError::new(500, "config_invalid", "invalid CRAWL_USER_AGENT (expected printable ASCII)"));
        }
        let fetch_timeout = seconds("CRAWL_FETCH_TIMEOUT_SEC", &get("CRAWL_FETCH_TIMEOUT_SEC"))?;
        if fetch_timeout.is_zero() {
            return Err(ApiError::new(500, "config_invalid", "invalid CRAWL_FETCH_TIMEOUT_SEC: 0 (expected > 0)"));
        }
        let max_reservations_per_token = count("CRAWL_MAX_RESERVATIONS_PER_TOKEN")?;
        if max_reservations_per_token == 0 {
            return Err(ApiError::new(
                500,
                "config_invalid",
                "invalid CRAWL_MAX_RESERVATIONS_PER_TOKEN: 0 (expected >= 1)",
            ));
        }
        Ok(GatewayConfig {
            max_reservations_per_token,
            policy,
            allow_private,
            max_hosts_per_token,
            robots_ttl: seconds("CRAWL_ROBOTS_TTL_SEC", &get("CRAWL_ROBOTS_TTL_SEC"))?,
            robots_retry: seconds("CRAWL_ROBOTS_RETRY_SEC", &get("CRAWL_ROBOTS_RETRY_SEC"))?,
            // left blank: the default (obeyed), never "off"
            obey_robots: match get("CRAWL_OBEY_ROBOTS").trim() {
                "" => true,
                value => boolean("CRAWL_OBEY_ROBOTS", value)?,
            },
            user_agent,
            max_wait: seconds("CRAWL_MAX_WAIT_SEC", &get("CRAWL_MAX_WAIT_SEC"))?,
            max_body_bytes: parse("CRAWL_MAX_BODY_BYTES", &get("CRAWL_MAX_BODY_BYTES"), "a number of bytes")?,
            fetch_timeout,
        })
    }

    /// When robots.txt is fetched, as the core's [`RobotsTiming`] (within its bounds): a copy is kept
    /// `CRAWL_ROBOTS_TTL_SEC` (at most 24 hours), a failure retried after `CRAWL_ROBOTS_RETRY_SEC` (doubling, at
    /// most an hour), and a fetch may take `CRAWL_FETCH_TIMEOUT_SEC` and 5 s more from its departure to report.
    pub fn robots_timing(&self) -> RobotsTiming {
        RobotsTiming {
            max_age: self.robots_ttl,
            first_retry: self.robots_retry,
            fetch_timeout: self.fetch_timeout.saturating_add(Duration::from_secs(5)),
            ..RobotsTiming::default()
        }
        .bounded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<GatewayConfig, ApiError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        GatewayConfig::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_are_the_crawler_knobs() {
        let c = with(&[]).unwrap();
        assert_eq!((c.policy.rate_per_sec, c.policy.burst_capacity), (2.0, 4.0));
        assert_eq!((c.policy.max_backoff_sec, c.policy.max_retries), (120.0, 3));
        assert_eq!(c.policy.quota, None);
        assert!(!c.allow_private);
        assert_eq!(c.robots_ttl, Duration::from_secs(86_400));
        assert!(c.obey_robots);
        let timing = c.robots_timing();
        assert_eq!((timing.max_age, timing.first_retry), (Duration::from_secs(86_400), Duration::from_secs(60)));
        assert_eq!(timing.fetch_timeout, Duration::from_secs(35));
    }

    #[test]
    fn robots_timing_stays_within_the_rfc() {
        let c =
            with(&[("CRAWL_ROBOTS_TTL_SEC", "604800"), ("CRAWL_ROBOTS_RETRY_SEC", "1"), ("CRAWL_OBEY_ROBOTS", "no")])
                .unwrap();
        assert!(!c.obey_robots);
        assert!(with(&[("CRAWL_OBEY_ROBOTS", " ")]).unwrap().obey_robots, "blank is the default, not off");
        assert_eq!(c.robots_timing().max_age, Duration::from_secs(86_400), "a copy is kept at most a day");
        assert_eq!(c.robots_timing().first_retry, Duration::from_secs(1));
    }

    #[test]
    fn vars_are_read_and_bad_values_name_the_variable() {
        let c = with(&[
            ("CRAWL_RATE_PER_SEC", "5"),
            ("CRAWL_BURST_CAPACITY", "1"),
            ("CRAWL_QUOTA_LIMIT", "100"),
            ("CRAWL_QUOTA_WINDOW_SEC", "60"),
            ("CRAWL_ALLOW_PRIVATE_TARGETS", "true"),
            ("CRAWL_ROBOTS_TTL_SEC", "0"),
        ])
        .unwrap();
        assert_eq!(c.policy.rate_per_sec, 5.0);
        assert_eq!(c.policy.quota, Some(Quota { limit: 100, window_sec: 60.0 }));
        assert!(c.allow_private);
        assert!(c.robots_ttl.is_zero());
        for (name, value, says) in [
            ("CRAWL_RATE_PER_SEC", "fast", "CRAWL_RATE_PER_SEC"),
            ("CRAWL_RATE_PER_SEC", "0", "ratePerSec"),
            ("CRAWL_RATE_PER_SEC", "NaN", "ratePerSec"),
            ("CRAWL_BURST_CAPACITY", "0.5", "burstCapacity"),
            ("CRAWL_MAX_RETRIES", "-1", "CRAWL_MAX_RETRIES"),
            ("CRAWL_ALLOW_PRIVATE_TARGETS", "maybe", "CRAWL_ALLOW_PRIVATE_TARGETS"),
            ("CRAWL_MAX_HOSTS_PER_TOKEN", "0", "CRAWL_MAX_HOSTS_PER_TOKEN"),
            ("CRAWL_MAX_RESERVATIONS_PER_TOKEN", "0", "CRAWL_MAX_RESERVATIONS_PER_TOKEN"),
            ("CRAWL_ROBOTS_TTL_SEC", "-5", "CRAWL_ROBOTS_TTL_SEC"),
            ("CRAWL_ROBOTS_RETRY_SEC", "soon", "CRAWL_ROBOTS_RETRY_SEC"),
            ("CRAWL_OBEY_ROBOTS", "maybe", "CRAWL_OBEY_ROBOTS"),
            ("CRAWL_USER_AGENT", "bad\u{7f}agent", "CRAWL_USER_AGENT"),
        ] {
            let e = with(&[(name, value)]).unwrap_err();
            assert_eq!((e.status, e.code), (500, "config_invalid"));
            assert!(e.message.contains(says), "{name}={value}: {e}");
        }
    }
}
