//! What a host that pushes back (429, 503, a robots.txt 429/5xx) does to its pacing: the cooldown's length, the
//! departures it holds, the slower pace it teaches, and when the host is given up on.
//!
//! - **Incidents, not responses.** An answer that pushes back while the host is already cooling down belongs to
//!   the incident that began the cooldown (eight 429s to requests that were in flight together are one incident):
//!   it may lengthen the cooldown, nothing else.
//! - **Held departures.** When a cooldown begins or grows, every departure reserved before it and not yet
//!   confirmed is *held*: confirming it charges a new reservation behind the cooldown (the restarted bucket, the
//!   interval, the quota), and that new instant is the one to wait for and confirm. Departures held together keep
//!   the host's spacing after the cooldown, in the order they are confirmed.
//! - **Backoff without a usable Retry-After** (absent, malformed, zero or a past date): `defaultRetryAfterSec`
//!   doubled for each incident of the streak after the first, stretched by a random 0–25 %, capped by
//!   `maxBackoffSec`. A streak is forgiven when no incident begins within `maxBackoffSec` of the last cooldown's
//!   end.
//! - **A slower pace.** Each incident halves the host's rate (never below [`SLOWEST_SHARE`] of the configured rate,
//!   or the adaptive floor); each success afterwards gives back [`RECOVERY_SHARE`] of the configured rate, never
//!   above it. The burst capacity shrinks with the rate, to one at the slowest.
//! - **Giving up.** A host whose streak has lasted [`GIVE_UP_AFTER`] is given up on for [`GIVE_UP_AFTER`]: nothing
//!   is sent there (its cooldown covers it) and a registry refuses to reserve for it
//!   ([`crate::Error::HostGivenUp`]).

use crate::compact::{Reader, Writer};
use crate::time::{duration_nanos, Instant};
use std::time::Duration;

/// How long a host may go on pushing back (a streak of incidents, each beginning within `maxBackoffSec` of the
/// previous cooldown's end) before it is given up on; and how long it is then left alone.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(15 * 60);

/// The slowest pushback makes a host: this share of the configured rate (with adaptive pacing, its
/// `minRatePerSec`).
pub const SLOWEST_SHARE: f64 = 1.0 / 32.0;

/// What one success after pushback gives back of the configured rate.
pub const RECOVERY_SHARE: f64 = 1.0 / 64.0;

/// The largest stretch of a backoff by jitter: up to a quarter more, never less.
const JITTER: f64 = 0.25;

/// A host's record of pushback.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pushback {
    /// Departures reserved for an instant before this one and confirmed only now are held (ZERO: none; set one
    /// nanosecond past the last slot reserved when the host pushed back, so a reservation at the origin counts).
    pub(crate) held_until: Instant,
    /// When the current streak of incidents began (meaningful while `incidents` > 0).
    pub(crate) streak_began: Instant,
    /// Incidents in the current streak (0: none).
    pub(crate) incidents: u32,
    /// A new incident after this instant starts a new streak: `maxBackoffSec` after the last cooldown's end.
    pub(crate) streak_ends: Instant,
    /// The host is given up on until this instant (none when in the past).
    pub(crate) given_up_until: Instant,
    /// When the last success (an answer below 400) of the streak came (ZERO: none yet).
    pub(crate) last_accepted: Instant,
    /// Seven eighths of the lowest level the host pushed back at in this streak: its level climbs back no
    /// higher while the streak lasts (0: none).
    pub(crate) ceiling: f32,
}

impl Pushback {
    /// Whether a departure reserved for `departs` and confirmed now is held.
    pub(crate) fn holds(&self, departs: Instant) -> bool {
        departs < self.held_until
    }

    /// Hold every departure reserved until now: `last_slot`, the latest instant reserved (none: nothing to hold).
    pub(crate) fn hold(&mut self, last_slot: Option<Instant>) {
        if let Some(last) = last_slot {
            self.held_until = self.held_until.max(last.add_nanos(1));
        }
    }

    /// Whether the streak is forgiven at `now`.
    fn forgiven(&self, now: Instant) -> bool {
        self.incidents == 0 || now > self.streak_ends
    }

    /// Whether nothing of the record matters at `now` any more (no hold pending, the streak forgiven, not given up).
    pub(crate) fn spent(&self, now: Instant) -> bool {
        self.held_until <= now && self.given_up_until <= now && self.forgiven(now)
    }

    /// Count a new incident at `now`; returns the number of incidents in its streak.
    pub(crate) fn begin_incident(&mut self, now: Instant) -> u32 {
        if self.forgiven(now) {
            *self = Pushback { held_until: self.held_until, streak_began: now, ..Pushback::default() };
        }
        self.incidents = self.incidents.saturating_add(1);
        self.incidents
    }

    /// The highest level the host may climb back to at `now`: below the lowest level it pushed back at, while the
    /// streak lasts (none once it is forgiven).
    pub(crate) fn ceiling(&self, now: Instant) -> Option<f64> {
        (self.ceiling > 0.0 && !self.forgiven(now)).then_some(f64::from(self.ceiling))
    }

    /// A success at `now`: the rate the host is accepting now (one over the time since the streak's previous
    /// success), if known.
    pub(crate) fn accept(&mut self, now: Instant) -> Option<f64> {
        if self.forgiven(now) {
            return None;
        }
        let since = now.nanos_since(self.last_accepted);
        let rate = (self.last_accepted != Instant::ZERO && since > 0).then(|| 1e9 / since as f64);
        self.last_accepted = now;
        rate
    }

    /// The host pushed back at `level`: the streak's ceiling is at most seven eighths of it.
    pub(crate) fn too_fast_at(&mut self, level: f32) {
        let below = level * 7.0 / 8.0;
        self.ceiling = if self.ceiling > 0.0 { self.ceiling.min(below) } else { below };
    }

    /// Whether the streak has gone on long enough at `now` to give the host up.
    pub(crate) fn gives_up(&self, now: Instant) -> bool {
        self.incidents > 0 && now.nanos_since(self.streak_began) >= duration_nanos(GIVE_UP_AFTER)
    }

    /// The host is given up on at `now` (for `None`, not).
    pub(crate) fn given_up(&self, now: Instant) -> Option<Instant> {
        (self.given_up_until > now).then_some(self.given_up_until)
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.instant(self.held_until);
        w.instant(self.streak_began);
        w.u64(u64::from(self.incidents));
        w.instant(self.streak_ends);
        w.instant(self.given_up_until);
        w.instant(self.last_accepted);
        w.f32(self.ceiling);
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Pushback {
        Pushback {
            held_until: r.instant("held until"),
            streak_began: r.instant("streak start"),
            incidents: r.u32("incidents"),
            streak_ends: r.instant("streak end"),
            given_up_until: r.instant("given up until"),
            last_accepted: r.instant("last accepted"),
            ceiling: r.f32("ceiling"),
        }
    }
}

/// The cooldown for incident number `incidents` (from 1) of a streak without a usable Retry-After:
/// `default_ns` doubled per incident after the first, stretched by up to [`JITTER`] by `draw` (a uniformly random
/// `u64`), capped by `max_ns`.
pub(crate) fn backoff_ns(default_ns: u64, max_ns: u64, incidents: u32, draw: u64) -> u64 {
    let doubled = default_ns.saturating_mul(1u64 << incidents.saturating_sub(1).min(40));
    let stretch = 1.0 + JITTER * unit(draw);
    ((doubled as f64 * stretch) as u64).min(max_ns)
}

/// A uniformly random `u64` as a number in [0, 1).
fn unit(draw: u64) -> f64 {
    (draw >> 11) as f64 / (1u64 << 53) as f64
}

/// The random source of the backoffs' jitter: SplitMix64 from a seed (a shell seeds it from the platform's
/// randomness, so that crawlers pushed back together do not come back together), or a constant draw (tests: 0
/// stretches nothing), so every wait is reproducible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Random {
    /// SplitMix64, with its state.
    Seeded(u64),
    /// The same draw every time.
    Constant(u64),
}

impl Random {
    /// A SplitMix64 source seeded with `seed`.
    pub const fn new(seed: u64) -> Random {
        Random::Seeded(seed)
    }

    /// A share of a spacing to stretch it by: uniformly random from 0 up to `jitter` (0 when `jitter` is 0, with
    /// nothing drawn).
    pub fn stretch(&mut self, jitter: f64) -> f64 {
        if jitter > 0.0 {
            unit(self.next_u64()) * jitter
        } else {
            0.0
        }
    }

    /// The next uniformly random `u64` (the constant, for [`Random::Constant`]).
    pub fn next_u64(&mut self) -> u64 {
        match self {
            Random::Constant(draw) => *draw,
            Random::Seeded(state) => {
                *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            }
        }
    }
}

impl Default for Random {
    fn default() -> Random {
        Random::new(0x005e_ed0f_4057)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn backoff_doubles_per_incident_is_stretched_never_shortened_and_capped() {
        assert_eq!(backoff_ns(30 * S, 120 * S, 1, 0), 30 * S);
        assert_eq!(backoff_ns(30 * S, 120 * S, 2, 0), 60 * S);
        assert_eq!(backoff_ns(30 * S, 120 * S, 3, 0), 120 * S);
        assert_eq!(backoff_ns(30 * S, 120 * S, 9, 0), 120 * S);
        assert!(backoff_ns(30 * S, 120 * S, 1, u64::MAX) <= 37_500_000_000, "at most a quarter more");
        assert_eq!(backoff_ns(30 * S, 120 * S, 1, 1 << 63), 33_750_000_000, "half the stretch");
        assert_eq!(backoff_ns(u64::MAX, 120 * S, u32::MAX, u64::MAX), 120 * S, "saturates, then the cap");
    }

    #[test]
    fn a_streak_is_forgiven_after_a_quiet_period_and_gives_up_after_its_bound() {
        let mut p = Pushback::default();
        assert_eq!(p.begin_incident(Instant::from_secs(10)), 1);
        p.streak_ends = Instant::from_secs(160);
        assert_eq!(p.begin_incident(Instant::from_secs(160)), 2, "within the quiet period: the same streak");
        p.streak_ends = Instant::from_secs(340);
        assert_eq!(p.begin_incident(Instant::from_secs(341)), 1, "after it: forgiven");
        assert_eq!(p.streak_began, Instant::from_secs(341));
        assert!(!p.gives_up(Instant::from_secs(341 + 899)));
        assert!(p.gives_up(Instant::from_secs(341 + 900)));
    }

    #[test]
    fn the_random_source_is_reproducible_and_spread() {
        let (mut a, mut b) = (Random::new(7), Random::new(7));
        let draws: Vec<u64> = (0..1000).map(|_| a.next_u64()).collect();
        assert!(draws.iter().all(|&d| d == b.next_u64()));
        assert_eq!(Random::Constant(9).next_u64(), 9);
        let mean = draws.iter().map(|&d| unit(d)).sum::<f64>() / 1000.0;
        assert!((0.45..0.55).contains(&mean), "{mean}");
    }
}
