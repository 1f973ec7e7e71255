//! What a decision answers: the wait, the layer that set it, the departure, the permit.

use crate::layers::{Layer, Permit};
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The answer to "may one request leave for this host": a value, never an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// How long after `now` the request departs.
    pub wait: Duration,
    /// The layer that set the wait ([`Layer::None`] when `wait` is zero).
    pub layer: Layer,
    /// The reserved departure instant (`now + wait`).
    pub departs: Instant,
    /// Whether a departure was reserved and every layer charged. False only when all concurrency permits are
    /// held: then nothing was taken, and the caller asks again after `wait` or after a release.
    pub reserved: bool,
    /// The concurrency permit taken for this departure (when the policy limits concurrency); release it when the
    /// response is finished.
    pub permit: Option<Permit>,
}

/// What confirming a reserved departure answers ([`crate::HostState::depart`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Departure {
    /// Go now: the departure is recorded.
    Go,
    /// Not yet: wait this long and confirm the same departure again (its instant has not come, or a departure
    /// before it left late and the host's spacing counts from then).
    Wait(Duration),
    /// Held: the host began cooling down after this departure was reserved. It was reserved again, behind the
    /// cooldown, for `departs` (a wait of `wait`, set by `layer`): wait for that instant and confirm it instead.
    Held {
        /// The new reserved instant.
        departs: Instant,
        /// How long until it.
        wait: Duration,
        /// The layer that set it.
        layer: Layer,
    },
}

impl Departure {
    /// How long to wait before confirming again (zero: go).
    pub fn wait(&self) -> Duration {
        match *self {
            Departure::Go => Duration::ZERO,
            Departure::Wait(wait) | Departure::Held { wait, .. } => wait,
        }
    }
}
