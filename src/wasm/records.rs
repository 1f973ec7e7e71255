//! What `SharedLimiter` (shared-limiter.js) asks of a `Limiter` to share its hosts through a store: the limiter's
//! clock set to the store's, a host's record to write and one to adopt (the core's `Registry::host_record` and
//! `Registry::adopt_host`), a host rebuilt when its record is lost, the row of a robots.txt copy, and the share of
//! the policy a process keeps to on its own. None of it is in the package's declarations: `SharedLimiter` is
//! the one caller.

use super::args::{self, ConfigArg};
use super::limiter::{host_arg, Crawler, JsLimiter};
use super::{answer, glue, js_error, ms, ms_arg};
use crate::registry::{robots_row, Registry};
use crate::time::Instant;
use crate::time::{duration_nanos, MAX_CLOCK_GAP};
use wasm_bindgen::prelude::*;

/// The error for a record a store holds that cannot be read, named `HostRecordUnreadable`.
fn unreadable(host: &str, error: crate::Error) -> JsValue {
    let js = js_sys::Error::new(&format!("the shared store's record of {host} is unreadable: {error}"));
    js.set_name("HostRecordUnreadable");
    js.into()
}

#[wasm_bindgen(js_class = Limiter)]
impl JsLimiter {
    /// A limiter with `fleetSize` processes' share of `config`'s policy (the core's `Policy::fleet_share`): the
    /// pacing each keeps to on its own when their shared store is out of reach.
    #[wasm_bindgen(js_name = fleetShare, skip_typescript)]
    pub fn fleet_share(config: Option<ConfigArg>, fleet_size: JsValue) -> JsValue {
        answer(|| {
            let fleet_size = args::whole(&fleet_size, "fleetSize", 1.0, 10_000.0)? as u32;
            let config = args::config(&config)?;
            // refused here, at the construction of a SharedLimiter, rather than by its first adoption of a record
            if config.policy.group_by == crate::GroupBy::Site {
                return Err(js_error(
                    "invalid config field groupBy: 'site' is not supported by SharedLimiter (a store shared by \
                     several processes keeps hosts, not sites): use groupBy 'host', or a Limiter",
                ));
            }
            let policy = config.policy.fleet_share(fleet_size);
            let crawler = Crawler::of(&config)?;
            let warnings = policy.validate().map_err(js_error)?.iter().map(ToString::to_string).collect();
            let registry = Registry::new(policy).map_err(js_error)?;
            Ok(JsLimiter::from_registry(registry, warnings, crawler))
        })
    }

    /// The key of `url`'s host (`example.com`, `example.com:8080`): the name of its record in a shared store.
    #[wasm_bindgen(js_name = hostOf, skip_typescript)]
    pub fn host_of(&self, url: JsValue) -> JsValue {
        answer(|| self.shared.host_name(&url))
    }

    /// Run this limiter's clock `offsetMs` milliseconds off the platform's (the offset to a shared store's clock,
    /// at most a day either way): every instant it reads from then on is the platform's moved by it.
    #[wasm_bindgen(js_name = setClockOffset, skip_typescript)]
    pub fn set_clock_offset(&self, offset_ms: JsValue) -> JsValue {
        answer(|| {
            let limit = duration_nanos(MAX_CLOCK_GAP) as f64 / 1e6;
            let offset = args::number(&offset_ms, "offsetMs")?;
            if !(-limit..=limit).contains(&offset) {
                return Err(js_error(format!("invalid offsetMs: {offset} (expected at most {limit} either way)")));
            }
            self.shared.clock_offset_ms.set(offset);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// `host`'s record now (a host name or any URL on it): its state and what is known of its robots.txt, to
    /// keep in a shared store for `keepMs`; `undefined` when nothing is left to remember (a store may delete it).
    #[wasm_bindgen(js_name = hostRecord, skip_typescript)]
    pub fn host_record(&self, host: JsValue) -> JsValue {
        answer(|| {
            let key = host_arg(&host)?;
            let now = self.shared.clock();
            let file = self.robots_of(&key);
            let Some(record) = self.shared.registry.borrow().host_record(&key, &file, now) else {
                return Ok(JsValue::UNDEFINED);
            };
            Ok(glue::host_record(&record.text, ms(record.keep_until.saturating_duration_since(now))))
        })
    }

    /// Make `host`'s state the one `record` holds (`null`: nothing is remembered of it), whatever this limiter
    /// held. `rules` is the row of the robots.txt copy the record names (`robotsRow`), `null` when the store has
    /// none, or left out when not read yet: then, if the record names rules this limiter does not hold, nothing
    /// changes and the answer is false (read the row and adopt again). True once adopted. A record or a row that
    /// cannot be read throws an `Error` named `HostRecordUnreadable`, and nothing changes (see `departedElsewhere`).
    #[wasm_bindgen(js_name = adoptHost, skip_typescript)]
    pub fn adopt_host(&self, host: JsValue, record: JsValue, rules: JsValue) -> JsValue {
        answer(|| {
            let key = host_arg(&host)?;
            let record = if record.is_null() { None } else { Some(args::string(&record, "record")?) };
            let rules = match () {
                _ if rules.is_undefined() => None,
                _ if rules.is_null() => Some(None),
                _ => Some(Some(args::string(&rules, "rules")?)),
            };
            let mut file = self.robots_of(&key);
            let rules = rules.as_ref().map(|row| row.as_deref());
            let now = self.shared.clock();
            self.shared.registry.borrow_mut().adopt_host(&key, record.as_deref(), &mut file, rules, now).map_err(|e| {
                match e {
                    // what the record or the row says cannot be read; anything else (a host the registry has no
                    // room for) is no fault of theirs
                    crate::Error::InvalidSnapshot { .. } => unreadable(key.as_str(), e),
                    other => js_error(other),
                }
            })
        })
    }

    /// How many hosts this limiter has evicted since it was made (the core's `Registry::evictions`): while it stays
    /// the same, a host it decided on still holds the state its last call left.
    #[wasm_bindgen(getter, js_name = hostsEvicted, skip_typescript)]
    pub fn hosts_evicted(&self) -> f64 {
        self.shared.registry.borrow().evictions() as f64
    }

    /// A request to `host` left at `atMs` (default: now) without this limiter knowing: it is charged as a
    /// departure then, with the bucket empty after it (the core's `Registry::departed_elsewhere`). How a process
    /// hands a host it paced on its own back to the shared store, and how a host whose record cannot be read is
    /// rebuilt: never a fresh burst. `heldUntilMs`, when given and still ahead, is a cooldown the host was put in
    /// meanwhile (a 429 or 503 learned on its own): it holds here too, as the core's `Registry::throttle`.
    #[wasm_bindgen(js_name = departedElsewhere, skip_typescript)]
    pub fn departed_elsewhere(&self, host: JsValue, at_ms: JsValue, held_until_ms: JsValue) -> JsValue {
        answer(|| {
            let key = host_arg(&host)?;
            let now = self.shared.clock();
            let instant = |value: &JsValue, name| -> Result<Instant, JsValue> {
                Ok(Instant::from_millis_f64(ms_arg(args::number(value, name)?, name)?))
            };
            let at = match args::absent(&at_ms) {
                true => now,
                false => instant(&at_ms, "atMs")?,
            };
            let held_until = match args::absent(&held_until_ms) {
                true => None,
                false => Some(instant(&held_until_ms, "heldUntilMs")?).filter(|&until| until > now),
            };
            let mut registry = self.shared.registry.borrow_mut();
            registry.departed_elsewhere(&key, at).map_err(js_error)?;
            if let Some(until) = held_until {
                registry.throttle(&key, Some(until.saturating_duration_since(now)), now).map_err(js_error)?;
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The row a shared store keeps beside `host`'s record for the copy of its robots.txt in force, whose text is
    /// `robotsTxt` (as reported to `robotsFetched`); `undefined` when the copy in force is no rules.
    #[wasm_bindgen(js_name = robotsRow, skip_typescript)]
    pub fn robots_row(&self, host: JsValue, robots_txt: JsValue) -> JsValue {
        answer(|| {
            let key = host_arg(&host)?;
            let text = args::string(&robots_txt, "robotsTxt")?;
            let file = self.robots_of(&key);
            Ok(match (file.robots(), file.fetched_at()) {
                (Some(_), Some(fetched)) => robots_row(fetched, &text).into(),
                _ => JsValue::UNDEFINED,
            })
        })
    }
}

/// Milliseconds between a shared limiter's asks while every permit of a host is held (the core's
/// `SHARED_RECHECK`).
#[wasm_bindgen(js_name = sharedRecheckMs, skip_typescript)]
pub fn shared_recheck_ms() -> f64 {
    ms(crate::registry::SHARED_RECHECK)
}
