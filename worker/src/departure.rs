//! Sleeping a wait the core computed, and the "confirm until go" loop the host's object confirms departures with:
//! ask the desk to confirm a departure, sleep the wait it names (or less, when a change of the host's rules
//! wakes it), ask again ([`confirm_until_go`]).

use crate::api::ApiError;
use std::future::Future;
use std::time::Duration;

/// How long the timer for a wait is set, in whole milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The wait rounded up: a timer is never asked to fire before the instant the wait leads to.
    AtTheWait,
    /// The wait rounded down, plus one millisecond: the next confirmation comes a little past the instant, so
    /// departures confirmed one after the other keep a margin over the host's spacing (the host's object).
    PastTheWait,
}

impl Timer {
    /// The timer's milliseconds for a wait of `wait_ms` (more than zero).
    fn millis(self, wait_ms: f64) -> u64 {
        match self {
            Timer::AtTheWait => wait_ms.ceil() as u64,
            Timer::PastTheWait => wait_ms.floor() as u64 + 1,
        }
    }
}

/// Sleep `ms` milliseconds, in whole milliseconds rounded up (a timer is never asked to fire before a reserved
/// instant); nothing for zero or less.
pub(crate) async fn sleep_ms(ms: f64) {
    sleep(ms, Timer::AtTheWait).await;
}

/// Sleep a wait of `ms` milliseconds with `timer`; nothing for zero or less.
async fn sleep(ms: f64, timer: Timer) {
    if ms > 0.0 {
        worker::Delay::from(Duration::from_millis(timer.millis(ms))).await;
    }
}

/// How a run of confirmations ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Confirmed {
    /// The departure may go now, after `waited_ms` of waits slept between confirmations.
    Go {
        /// The waits slept, in milliseconds.
        waited_ms: f64,
    },
    /// Every round named a wait: `waited_ms` were slept and the departure is still not confirmed.
    NotYet {
        /// The waits slept, in milliseconds.
        waited_ms: f64,
    },
}

/// Confirm a departure until it may go: `confirm` answers the milliseconds still to wait (zero or less: go);
/// each wait is slept with `timer` and the departure confirmed again, `rounds` times at most (a late timer
/// elsewhere must not bring two departures closer than the host's spacing). `pause` sleeps a timer's duration and
/// says whether something woke it before its end (the departure is then confirmed at once, and only the time
/// that went by counts as waited).
pub(crate) async fn confirm_until_go<F, C, P, S>(
    rounds: u32,
    timer: Timer,
    mut confirm: C,
    mut pause: P,
) -> Result<Confirmed, ApiError>
where
    C: FnMut() -> F,
    F: Future<Output = Result<f64, ApiError>>,
    P: FnMut(Duration) -> S,
    S: Future<Output = bool>,
{
    let mut waited_ms = 0.0;
    for _ in 0..rounds {
        let wait = confirm().await?;
        if wait <= 0.0 {
            return Ok(Confirmed::Go { waited_ms });
        }
        let started = crate::js::now_ms();
        let woken = pause(Duration::from_millis(timer.millis(wait))).await;
        waited_ms += if woken { (crate::js::now_ms() - started).clamp(0.0, wait) } else { wait };
    }
    Ok(Confirmed::NotYet { waited_ms })
}
