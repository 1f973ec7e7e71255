//! What a fetch of a host's robots.txt means (RFC 9309 §2.3.1, §2.4), as a small state machine told statuses and
//! times (sans-I/O: every shell fetches the file its own way and reports here, so none re-derives the rules).
//!
//! - **2xx**: the body is the rules ([`Robots::parse`]).
//! - **3xx**: the shell follows redirects, at least five hops; a 3xx reported here means it gave up, and the file
//!   counts as unavailable: everything allowed (§2.3.1.2 lets a crawler assume so).
//! - **4xx** (and any other status below 500) but 429: unavailable, everything allowed (§2.3.1.3).
//! - **5xx, 429, a network error or a timeout**: unreachable, everything **disallowed** (§2.3.1.4) until a retry
//!   succeeds. (A 429 "Too Many Requests" asks the crawler to come back later, not to crawl freely, so it counts
//!   as unreachable, as Google's crawler reads it.) Retries back off from [`RobotsTiming::first_retry`], doubling
//!   to [`RobotsTiming::max_retry`]. After [`RobotsTiming::give_up_after`] of failures in a row the last good
//!   copy applies again, or, without one, everything is allowed; retries go on.
//! - A copy (rules, or "everything allowed" from a 4xx) is good for [`RobotsTiming::max_age`] (at most 24 hours,
//!   §2.4); past that a fetch is due, and the old copy keeps applying until its answer arrives.
//! - Before the first answer nothing is known ([`Verdict::Pending`]): the caller waits for the file.
//! - [`RobotsFile::start`] hands out one fetch at a time, numbered. The shell gives up on it at its
//!   [`RobotsFile::deadline`], [`RobotsTiming::fetch_timeout`] after it departs (later than it was handed out when
//!   it waits for its host's turn: [`RobotsFile::departs`]); a fetch that never reports back frees the way a
//!   second after that, so that a shell giving up at its deadline reports first. A report carrying the number of
//!   a fetch that is no longer the one under way ([`RobotsFile::is_current`]) is stale: a newer fetch was handed
//!   out, or a newer answer came, and it must not replace that.

use super::{Robots, Rule};
use crate::observe::{pushes_back, Purpose};
use crate::time::Instant;
use std::time::Duration;

/// How long a fetch that was not reported past its deadline still blocks another, so that a shell giving up at
/// the deadline reports first.
const GRACE: Duration = Duration::from_secs(1);

/// The times of a [`RobotsFile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RobotsTiming {
    /// How long a fetched copy is used before the file is fetched again (default and most: 24 hours).
    pub max_age: Duration,
    /// The first retry after a failure (default 60 s); each failure in a row doubles it.
    pub first_retry: Duration,
    /// The longest wait between retries (default 1 hour, never more than `max_age`).
    pub max_retry: Duration,
    /// Failures in a row for this long make the last good copy apply again, or everything allowed (default and
    /// most: 30 days).
    pub give_up_after: Duration,
    /// A fetch started this long ago without an answer no longer blocks another (default 60 s).
    pub fetch_timeout: Duration,
}

impl RobotsTiming {
    /// The longest a copy may be used: 24 hours (RFC 9309 §2.4).
    pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);
    /// How long failures last before the last good copy applies again: 30 days (RFC 9309 §2.3.1.4).
    pub const GIVE_UP_AFTER: Duration = Duration::from_secs(30 * 24 * 3600);

    /// These times within their bounds: `max_age` at most 24 hours and at least a second, retries between a
    /// second and `max_age`, `give_up_after` at most 30 days, `fetch_timeout` at least a second.
    pub fn bounded(self) -> RobotsTiming {
        let second = Duration::from_secs(1);
        let max_age = self.max_age.clamp(second, Self::MAX_AGE);
        let max_retry = self.max_retry.clamp(second, max_age);
        RobotsTiming {
            max_age,
            first_retry: self.first_retry.clamp(second, max_retry),
            max_retry,
            give_up_after: self.give_up_after.min(Self::GIVE_UP_AFTER),
            fetch_timeout: self.fetch_timeout.max(second),
        }
    }
}

impl Default for RobotsTiming {
    fn default() -> Self {
        RobotsTiming {
            max_age: Self::MAX_AGE,
            first_retry: Duration::from_secs(60),
            max_retry: Duration::from_secs(3600),
            give_up_after: Self::GIVE_UP_AFTER,
            fetch_timeout: Duration::from_secs(60),
        }
    }
}

/// What is known of a host's robots.txt, and when to fetch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotsFile {
    timing: RobotsTiming,
    /// The copy in force: rules, or `None` for "everything allowed" (a 4xx). `None` of the outer option: no
    /// answer yet.
    copy: Option<Option<Robots>>,
    /// When the copy in force was fetched.
    fetched: Option<Instant>,
    /// Failures in a row, and when the first of them came.
    failures: u32,
    failing_since: Option<Instant>,
    /// When a fetch is due.
    due: Instant,
    /// The fetch handed out and not yet answered: its number, and when it departs (its timeout counts from then).
    started: Option<(u32, Instant)>,
    /// Fetches handed out so far (the number of the next one).
    handed_out: u32,
}

/// Whether a URL may be fetched, from what a [`RobotsFile`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// Allowed: no rule forbids it, the file is unavailable (4xx), or failures have lasted past
    /// [`RobotsTiming::give_up_after`] with no good copy.
    Allowed,
    /// Forbidden by this rule.
    Disallowed(&'a Rule),
    /// The file is unreachable (5xx, network error, timeout): nothing may be fetched before `retry_at`, when a
    /// fetch of robots.txt is due.
    Unreachable {
        /// When robots.txt is fetched again.
        retry_at: Instant,
    },
    /// No answer yet: fetch robots.txt first.
    Pending,
}

impl RobotsFile {
    /// Nothing known; a fetch is due at once. `timing` is used as given (see [`RobotsTiming::bounded`]).
    pub fn new(timing: RobotsTiming) -> RobotsFile {
        RobotsFile {
            timing,
            copy: None,
            fetched: None,
            failures: 0,
            failing_since: None,
            due: Instant::ZERO,
            started: None,
            handed_out: 0,
        }
    }

    /// Use `timing` from now on (a shell whose configuration changed): later fetches follow the new times, and a
    /// copy is never kept past the new `max_age` (a fetch already due for a retry stays due when it was).
    pub fn set_timing(&mut self, timing: RobotsTiming) {
        self.timing = timing;
        if let (Some(fetched), 0) = (self.fetched, self.failures) {
            self.due = self.due.min(fetched.saturating_add(timing.max_age));
        }
    }

    /// Whether [`RobotsFile::start`] would hand out a fetch at `now`: one is due and none is under way. Changes
    /// nothing.
    pub fn fetch_due(&self, now: Instant) -> bool {
        now >= self.due && self.busy_until(now).is_none()
    }

    /// While a fetch handed out is under way at `now` (not answered, and not past its deadline and the grace
    /// after it): when it stops blocking another.
    pub fn busy_until(&self, now: Instant) -> Option<Instant> {
        self.deadline().map(|deadline| deadline.saturating_add(GRACE)).filter(|until| now < *until)
    }

    /// Whether a caller should wait for the fetch under way at `now` before anything is sent: nothing is known
    /// yet ([`Verdict::Pending`]) and a fetch is under way.
    pub fn awaited(&self, now: Instant) -> bool {
        matches!(self.in_force(now), InForce::Pending) && self.busy_until(now).is_some()
    }

    /// Whether a fetch should start at `now` (one is due and none is under way): the fetch's number, once for
    /// each fetch handed out. The caller gives up on it within [`RobotsTiming::fetch_timeout`] and reports what
    /// came back ([`RobotsFile::fetched`], [`RobotsFile::failed`]) if it is still [`RobotsFile::is_current`].
    pub fn start(&mut self, now: Instant) -> Option<u32> {
        if !self.fetch_due(now) {
            return None;
        }
        let fetch = self.handed_out;
        self.handed_out = self.handed_out.wrapping_add(1);
        self.started = Some((fetch, now));
        Some(fetch)
    }

    /// The fetch `fetch` (handed out at an earlier instant) departs at `at`, when its host's turn comes: its
    /// timeout counts from then. Nothing changes for a fetch that is not [`RobotsFile::is_current`].
    pub fn departs(&mut self, fetch: u32, at: Instant) {
        if let Some((number, departs)) = &mut self.started {
            if *number == fetch {
                *departs = (*departs).max(at);
            }
        }
    }

    /// When the shell gives up on the fetch under way: [`RobotsTiming::fetch_timeout`] after it departs (`None`
    /// when none is under way).
    pub fn deadline(&self) -> Option<Instant> {
        self.started.map(|(_, departs)| departs.saturating_add(self.timing.fetch_timeout))
    }

    /// Whether `fetch` (a number from [`RobotsFile::start`]) is the fetch under way: not answered yet, and no
    /// newer fetch handed out since.
    pub fn is_current(&self, fetch: u32) -> bool {
        self.started.is_some_and(|(number, _)| number == fetch)
    }

    /// When the next fetch is due.
    pub fn due(&self) -> Instant {
        self.due
    }

    /// A fetch answered `status` with `body` (read only for a 2xx) at `now`; a status below 100 (0 by
    /// convention) means no answer came, as [`RobotsFile::failed`].
    pub fn fetched(&mut self, status: u16, body: &str, now: Instant) {
        match status {
            200..=299 => self.parsed(Robots::parse(body), now),
            status if status < 100 || pushes_back(status, Purpose::Robots) => self.failed(now),
            _ => self.keep(None, now),
        }
    }

    /// A fetch answered 2xx at `now` with the rules `robots` (for a caller that parsed the body already).
    pub fn parsed(&mut self, robots: Robots, now: Instant) {
        self.keep(Some(robots), now);
    }

    /// A fetch failed at `now` without an answer (network error, timeout), or answered 5xx or 429.
    pub fn failed(&mut self, now: Instant) {
        self.started = None;
        self.failures = self.failures.saturating_add(1);
        self.failing_since.get_or_insert(now);
        let doublings = (self.failures - 1).min(30);
        let wait = self.timing.first_retry.saturating_mul(1 << doublings).min(self.timing.max_retry);
        self.due = now.saturating_add(wait);
    }

    fn keep(&mut self, copy: Option<Robots>, now: Instant) {
        self.copy = Some(copy);
        self.fetched = Some(now);
        self.failures = 0;
        self.failing_since = None;
        self.started = None;
        self.due = now.saturating_add(self.timing.max_age);
    }

    /// What applies at `now`, before any rule is matched.
    fn in_force(&self, now: Instant) -> InForce<'_> {
        if let Some(since) = self.failing_since {
            if now.saturating_duration_since(since) < self.timing.give_up_after {
                return InForce::Unreachable { retry_at: self.due };
            }
        }
        match &self.copy {
            None if self.failing_since.is_some() => InForce::Everything,
            None => InForce::Pending,
            Some(None) => InForce::Everything,
            Some(Some(robots)) => InForce::Rules(robots),
        }
    }

    /// Whether `user_agent` may fetch `url` at `now` (see [`Verdict`]).
    pub fn verdict(&self, user_agent: &str, url: &str, now: Instant) -> Verdict<'_> {
        match self.in_force(now) {
            InForce::Unreachable { retry_at } => Verdict::Unreachable { retry_at },
            InForce::Pending => Verdict::Pending,
            InForce::Everything => Verdict::Allowed,
            InForce::Rules(robots) => match robots.matching_rule(user_agent, url) {
                Some(rule) if !rule.allow() => Verdict::Disallowed(rule),
                _ => Verdict::Allowed,
            },
        }
    }

    /// The rules in force, when the last good answer was a 2xx.
    pub fn robots(&self) -> Option<&Robots> {
        self.copy.as_ref().and_then(Option::as_ref)
    }

    /// When the copy in force was fetched (`None` before any good answer).
    pub fn fetched_at(&self) -> Option<Instant> {
        self.fetched
    }

    /// Failures in a row since the last good answer.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// What is known, as plain values a shell can persist (the rules themselves excepted: the shell keeps the
    /// text it fetched and gives it back to [`RobotsFile::restore`]). A fetch under way is not part of it.
    pub fn record(&self) -> RobotsRecord {
        RobotsRecord {
            copy: match &self.copy {
                None => RobotsCopy::None,
                Some(None) => RobotsCopy::Everything,
                Some(Some(_)) => RobotsCopy::Rules,
            },
            fetched: self.fetched,
            failures: self.failures,
            failing_since: self.failing_since,
            due: self.due,
            next_fetch: self.handed_out,
        }
    }

    /// A file as [`RobotsFile::record`] described it, under `timing`; `robots_txt` is the text of its rules when
    /// the record says [`RobotsCopy::Rules`] (parsed again here). A record of rules without their text knows
    /// no copy, and a fetch is due at once. Nothing is under way.
    pub fn restore(timing: RobotsTiming, record: RobotsRecord, robots_txt: Option<&str>) -> RobotsFile {
        let copy = match (record.copy, robots_txt) {
            (RobotsCopy::None, _) => None,
            (RobotsCopy::Everything, _) => Some(None),
            (RobotsCopy::Rules, Some(text)) => Some(Some(Robots::parse(text))),
            (RobotsCopy::Rules, None) => return RobotsFile::new(timing),
        };
        RobotsFile {
            timing,
            fetched: copy.as_ref().and(record.fetched),
            copy,
            failures: record.failures,
            failing_since: record.failing_since,
            due: record.due,
            started: None,
            handed_out: record.next_fetch,
        }
    }

    /// The fetch handed out and not yet answered: its number and the instant it departs (see
    /// [`RobotsFile::start`]), or `None`.
    pub fn under_way(&self) -> Option<(u32, Instant)> {
        self.started
    }

    /// Until when what the file knows must be remembered: a copy or a run of failures until a copy's age past
    /// the next fetch being due (so failures still count towards giving up), a fetch under way until its
    /// deadline. `None` when it knows nothing and nothing is under way (as a fresh file).
    pub fn keep_until(&self) -> Option<Instant> {
        let known = (self.copy.is_some() || self.failures > 0).then(|| self.due.saturating_add(self.timing.max_age));
        let fetching = self.deadline().map(|deadline| deadline.saturating_add(GRACE));
        match (known, fetching) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Take on what another process's file knows: its `record` and the fetch it has `under_way`, as read from a
    /// store shared by several processes. The copy of rules this file holds stays when the record's is the same
    /// one (fetched at the same instant); other rules are parsed from `rules`: `Some(Some(text))`, their text;
    /// `Some(None)`, looked for and not found (then nothing is known of the copy, and a fetch is due at once);
    /// `None`, not looked for yet: then nothing changes and the answer is false. True when the file took it on.
    pub fn adopt(
        &mut self,
        record: RobotsRecord,
        under_way: Option<(u32, Instant)>,
        rules: Option<Option<&str>>,
    ) -> bool {
        let held = matches!(self.copy, Some(Some(_))) && self.fetched == record.fetched;
        let mut record = record;
        let copy = match record.copy {
            RobotsCopy::None => None,
            RobotsCopy::Everything => Some(None),
            RobotsCopy::Rules if held => self.copy.take(),
            RobotsCopy::Rules => match rules {
                None => return false,
                Some(Some(text)) => Some(Some(Robots::parse(text))),
                Some(None) => {
                    record.due = Instant::ZERO;
                    None
                }
            },
        };
        *self = RobotsFile {
            timing: self.timing,
            fetched: copy.as_ref().and(record.fetched),
            copy,
            failures: record.failures,
            failing_since: record.failing_since,
            due: record.due,
            started: under_way,
            handed_out: record.next_fetch,
        };
        true
    }

    /// What the file is at `now`, in one word for a report: `pending` (no answer yet), `rules` (a copy of
    /// rules in force), `allowed` (unavailable: everything allowed), or `unreachable` (everything disallowed until
    /// a retry succeeds).
    pub fn status(&self, now: Instant) -> &'static str {
        match self.in_force(now) {
            InForce::Unreachable { .. } => "unreachable",
            InForce::Pending => "pending",
            InForce::Rules(_) => "rules",
            InForce::Everything => "allowed",
        }
    }
}

/// What a [`RobotsFile`] applies at an instant, before any rule is matched.
enum InForce<'a> {
    /// Everything disallowed until `retry_at`.
    Unreachable { retry_at: Instant },
    /// No answer yet.
    Pending,
    /// Everything allowed.
    Everything,
    /// These rules.
    Rules(&'a Robots),
}

/// Which copy a [`RobotsRecord`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotsCopy {
    /// No answer yet.
    None,
    /// Unavailable (a 4xx): everything allowed.
    Everything,
    /// Rules (a 2xx), whose text the shell keeps.
    Rules,
}

/// The persistent part of a [`RobotsFile`] (see [`RobotsFile::record`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RobotsRecord {
    /// The copy in force.
    pub copy: RobotsCopy,
    /// When it was fetched.
    pub fetched: Option<Instant>,
    /// Failures in a row since the last good answer.
    pub failures: u32,
    /// When the first of those failures came.
    pub failing_since: Option<Instant>,
    /// When the next fetch is due.
    pub due: Instant,
    /// The number the next fetch is handed out with (so a report of a fetch handed out before a restart is not
    /// taken for a newer one's).
    pub next_fetch: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const UA: &str = "hostpace";
    const S: Duration = Duration::from_secs(1);

    fn at(secs: u64) -> Instant {
        Instant::from_millis(secs * 1000)
    }

    fn allowed(file: &RobotsFile, url: &str, now: Instant) -> bool {
        file.verdict(UA, url, now) == Verdict::Allowed
    }

    #[test]
    fn nothing_is_known_before_the_first_answer() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        assert_eq!(file.verdict(UA, "/", at(0)), Verdict::Pending);
        assert!(file.start(at(0)).is_some());
        assert!(file.start(at(1)).is_none(), "one fetch at a time");
        assert_eq!(file.deadline(), Some(at(60)));
        assert!(file.start(at(60)).is_none(), "a second's grace after the deadline");
        assert!(file.start(at(61)).is_some(), "a fetch that never answers frees the way after the fetch timeout");
        assert_eq!(file.verdict(UA, "/", at(61)), Verdict::Pending);
    }

    #[test]
    fn a_report_of_a_fetch_no_longer_under_way_is_stale() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        let first = file.start(at(0)).expect("due at once");
        assert!(file.is_current(first));
        let second = file.start(at(61)).expect("the first timed out");
        assert_ne!(first, second);
        assert!(!file.is_current(first), "a newer fetch was handed out");
        assert!(file.is_current(second));
        file.fetched(200, "User-agent: *\nDisallow: /a\n", at(62));
        assert!(!file.is_current(second), "answered");
        assert!(file.start(at(63)).is_none(), "a copy is fresh");
    }

    #[test]
    fn a_fetch_waiting_for_its_turn_times_out_after_it_departs() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        let fetch = file.start(at(0)).expect("due at once");
        file.departs(fetch, at(45));
        assert_eq!(file.deadline(), Some(at(105)));
        assert!(file.start(at(105)).is_none());
        file.departs(fetch + 1, at(500));
        assert_eq!(file.deadline(), Some(at(105)), "another fetch's departure changes nothing");
        assert!(file.start(at(106)).is_some());
    }

    #[test]
    fn a_2xx_is_the_rules_for_a_day() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        assert!(file.start(at(0)).is_some());
        file.fetched(200, "User-agent: *\nDisallow: /private\n", at(1));
        assert!(allowed(&file, "/public", at(2)));
        match file.verdict(UA, "/private/x", at(2)) {
            Verdict::Disallowed(rule) => assert_eq!(rule.to_string(), "Disallow: /private (line 2)"),
            other => panic!("{other:?}"),
        }
        assert!(file.start(at(1 + 86_399)).is_none());
        assert!(file.start(at(1 + 86_400)).is_some(), "due after 24 hours");
        assert!(!allowed(&file, "/private", at(1 + 86_400)), "the old copy applies while the fetch is under way");
        file.fetched(200, "User-agent: *\nDisallow:\n", at(1 + 86_401));
        assert!(allowed(&file, "/private", at(1 + 86_402)));
    }

    #[test]
    fn a_4xx_or_a_redirect_given_up_allows_everything() {
        for status in [404, 401, 403, 410, 301, 199, 100] {
            let mut file = RobotsFile::new(RobotsTiming::default());
            file.fetched(status, "User-agent: *\nDisallow: /\n", at(0));
            assert!(allowed(&file, "/anything", at(1)), "{status}");
            assert_eq!(file.due(), at(86_400), "{status}");
        }
    }

    #[test]
    fn a_429_or_no_answer_is_unreachable_as_a_5xx() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        file.fetched(429, "", at(0));
        assert_eq!(file.verdict(UA, "/x", at(1)), Verdict::Unreachable { retry_at: at(60) });
        let mut no_answer = RobotsFile::new(RobotsTiming::default());
        no_answer.fetched(0, "", at(0));
        assert_eq!(no_answer.verdict(UA, "/x", at(1)), Verdict::Unreachable { retry_at: at(60) }, "0: no answer");
    }

    #[test]
    fn a_5xx_disallows_everything_and_retries_backing_off() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        file.fetched(503, "", at(0));
        assert_eq!(file.verdict(UA, "/x", at(1)), Verdict::Unreachable { retry_at: at(60) });
        assert!(file.start(at(59)).is_none());
        assert!(file.start(at(60)).is_some());
        file.failed(at(60));
        assert_eq!(file.due(), at(60 + 120), "the second failure waits twice as long");
        let mut last = at(0);
        for _ in 0..20 {
            last = file.due();
            assert!(file.start(last).is_some());
            file.fetched(500, "", last);
        }
        assert_eq!(file.due(), last.saturating_add(3600 * S), "retries wait at most max_retry");
        assert_eq!(file.failures(), 22);
        file.fetched(200, "User-agent: *\nDisallow: /a\n", file.due());
        assert!(allowed(&file, "/b", file.due()));
        assert_eq!(file.failures(), 0);
    }

    #[test]
    fn failures_for_thirty_days_bring_back_the_last_good_copy_or_allow() {
        let month = 30 * 86_400;
        let mut file = RobotsFile::new(RobotsTiming::default());
        file.fetched(200, "User-agent: *\nDisallow: /a\n", at(0));
        file.fetched(503, "", at(100));
        assert!(matches!(file.verdict(UA, "/b", at(100 + month - 1)), Verdict::Unreachable { .. }));
        assert!(allowed(&file, "/b", at(100 + month)));
        assert!(!allowed(&file, "/a", at(100 + month)), "the last good copy applies");

        let mut never = RobotsFile::new(RobotsTiming::default());
        never.failed(at(0));
        assert!(matches!(never.verdict(UA, "/a", at(month - 1)), Verdict::Unreachable { .. }));
        assert!(allowed(&never, "/a", at(month)), "no good copy: everything allowed");
    }

    #[test]
    fn a_record_restores_the_same_verdicts_and_due_time() {
        let text = "User-agent: *\nDisallow: /a\n";
        let mut rules = RobotsFile::new(RobotsTiming::default());
        rules.fetched(200, text, at(5));
        let back = RobotsFile::restore(RobotsTiming::default(), rules.record(), Some(text));
        assert_eq!(back, rules);
        assert!(!allowed(&back, "/a/b", at(6)));
        assert_eq!((back.due(), back.fetched_at(), back.status(at(6))), (at(86_405), Some(at(5)), "rules"));

        let mut failing = RobotsFile::new(RobotsTiming::default());
        failing.fetched(200, text, at(0));
        failing.fetched(503, "", at(10));
        failing.fetched(503, "", at(70));
        let back = RobotsFile::restore(RobotsTiming::default(), failing.record(), Some(text));
        assert_eq!(back.verdict(UA, "/b", at(71)), Verdict::Unreachable { retry_at: at(190) });
        assert_eq!((back.failures(), back.status(at(71))), (2, "unreachable"));

        let mut gone = RobotsFile::new(RobotsTiming::default());
        gone.fetched(404, "", at(0));
        let back = RobotsFile::restore(RobotsTiming::default(), gone.record(), None);
        assert_eq!((back.status(at(1)), allowed(&back, "/a", at(1))), ("allowed", true));

        let mut numbered = RobotsFile::new(RobotsTiming::default());
        let first = numbered.start(at(0)).expect("due");
        let back = RobotsFile::restore(RobotsTiming::default(), numbered.record(), None);
        assert!(!back.is_current(first), "nothing under way after a restore");
        assert_ne!(back.clone().start(at(0)), Some(first), "the numbering goes on");

        let lost = RobotsFile::restore(RobotsTiming::default(), rules.record(), None);
        assert_eq!((lost.status(at(6)), lost.fetch_due(at(6))), ("pending", true), "rules without their text");
    }

    #[test]
    fn fetch_due_says_what_start_would_do_without_starting() {
        let mut file = RobotsFile::new(RobotsTiming::default());
        assert!(file.fetch_due(at(0)));
        assert_eq!(file.busy_until(at(0)), None);
        let fetch = file.start(at(0)).expect("due");
        assert!(!file.fetch_due(at(1)) && file.awaited(at(1)));
        assert_eq!(file.busy_until(at(1)), Some(at(61)));
        assert!(file.fetch_due(at(61)) && file.busy_until(at(61)).is_none());
        file.fetched(404, "", at(2));
        assert!(!file.is_current(fetch) && !file.awaited(at(2)), "answered: nothing to wait for");
        file.set_timing(RobotsTiming { max_age: Duration::from_secs(10), ..RobotsTiming::default() });
        assert_eq!(file.due(), at(12), "a copy is kept no longer than the new max age");
        file.fetched(404, "", at(3));
        assert_eq!(file.due(), at(13), "the next follows the new times");
        file.fetched(503, "", at(4));
        file.set_timing(RobotsTiming { max_age: Duration::from_secs(1), ..RobotsTiming::default() });
        assert_eq!(file.due(), at(64), "a retry keeps its time");
    }

    #[test]
    fn timings_are_bounded() {
        let t = RobotsTiming {
            max_age: Duration::from_secs(100 * 86_400),
            first_retry: Duration::ZERO,
            max_retry: Duration::MAX,
            give_up_after: Duration::MAX,
            fetch_timeout: Duration::ZERO,
        }
        .bounded();
        assert_eq!(t.max_age, RobotsTiming::MAX_AGE);
        assert_eq!(t.first_retry, S);
        assert_eq!(t.max_retry, RobotsTiming::MAX_AGE);
        assert_eq!(t.give_up_after, RobotsTiming::GIVE_UP_AFTER);
        assert_eq!(t.fetch_timeout, S);
        let timing = RobotsTiming { max_age: Duration::from_secs(600), ..Default::default() }.bounded();
        let mut file = RobotsFile::new(timing);
        file.fetched(200, "", at(0));
        assert_eq!(file.due(), at(600), "a lower max age is kept");
    }
}
