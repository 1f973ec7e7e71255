//! One host's part of a registry as a record: its state, its own clock and what is known of its robots.txt, in
//! the compact snapshot format ([`crate::compact`]) in a record's form, of version [`RECORD_VERSION`]. A store
//! shared by several processes keeps one record per host (the package's `SharedLimiter`): a process adopts the
//! host's record ([`Registry::adopt_host`]), decides as usual, and writes back the host's record
//! ([`Registry::host_record`]) with a compare-and-set. The text of robots.txt rules is not in it but in a row of its
//! own ([`robots_row`]), so the record stays small and the rules are read once per copy.
//!
//! A record is kept small, as a store keeps one per host: it starts with a short magic (`hpr`), leaves out what
//! the policy settles (the processes sharing a record keep to the same policy; see the host state's record form),
//! and writes round numbers in short (`36e11`).

use super::{Registry, SNAPSHOT_VERSION};
use crate::compact::{Reader, Writer, MAGIC};
use crate::error::Error;
use crate::host::{Form, HostState};
use crate::host_key::HostKey;
use crate::robots::{RobotsCopy, RobotsFile, RobotsRecord};
use crate::time::{Instant, MAX_CLOCK_GAP};
use std::time::Duration;

/// The version of a host's record. It follows the snapshot format's ([`SNAPSHOT_VERSION`]: one ahead, as a record
/// of version 4 held the host state as a snapshot of version 4 does), so that a host state written otherwise is a
/// record of another version too.
pub const RECORD_VERSION: u32 = SNAPSHOT_VERSION + 1;

/// How long a record is kept at most without a decision: a host's state that time alone does not make fresh (a
/// learned rate level, a Crawl-delay) is forgotten a day after the last decision about it.
pub const RECORD_KEEP: Duration = Duration::from_secs(24 * 3600);

/// How often a process deciding through a shared store asks again while every permit of a host is held: it is
/// not told when another process gives one back, and would otherwise wait for the first lease to end.
pub const SHARED_RECHECK: Duration = Duration::from_millis(250);

/// A host's record as [`Registry::host_record`] writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRecord {
    /// The record's text.
    pub text: String,
    /// Until when it must be kept (a store may forget it then: the host is as fresh as an unknown one).
    pub keep_until: Instant,
}

fn write_instant(w: &mut Writer, at: Option<Instant>) {
    w.bool(at.is_some());
    if let Some(at) = at {
        w.instant(at);
    }
}

fn read_instant(r: &mut Reader<'_>, what: &str) -> Option<Instant> {
    r.bool(what).then(|| r.instant(what))
}

/// The error for a record that is not this host's, or not a record of this build.
fn unreadable(reason: impl Into<String>) -> Error {
    Error::InvalidSnapshot { reason: reason.into() }
}

impl Registry {
    /// `host`'s record at `now` with what `robots` knows of its robots.txt, or `None` when nothing is left to
    /// remember (the host is as fresh as one never seen, and robots.txt knows nothing). It is kept until the host
    /// would be fresh and what is known of robots.txt may be forgotten ([`RobotsFile::keep_until`]), at most
    /// [`RECORD_KEEP`] from `now`.
    pub fn host_record(&self, host: &HostKey, robots: &RobotsFile, now: Instant) -> Option<HostRecord> {
        let now = self.instant_for(host, now);
        let limits = self.limits_of(host);
        let fresh;
        let (state, seen) = match self.hosts.find(host) {
            Some(at) => (self.hosts.get(at), self.hosts.seen(at)),
            None => {
                fresh = HostState::new(&limits);
                (&fresh, now)
            }
        };
        let state_until = match state.fresh_by(&limits, now, RECORD_KEEP) {
            Some(at) if at <= now => None,
            Some(at) => Some(at),
            None => Some(now.saturating_add(RECORD_KEEP)),
        };
        let robots_until = robots.keep_until().filter(|&at| at > now);
        let keep_until = match (state_until, robots_until) {
            (None, None) => return None,
            (a, b) => a.max(b)?.min(now.saturating_add(RECORD_KEEP)),
        };
        let mut w = Writer::record();
        w.u64(u64::from(RECORD_VERSION));
        // the host's clock, and every later instant from it
        w.u64(seen.as_nanos());
        w.set_base(seen);
        w.str(host.as_str());
        state.write(&mut w, Form::Record(&limits));
        let part = robots.record();
        w.u64(match part.copy {
            RobotsCopy::None => 0,
            RobotsCopy::Everything => 1,
            RobotsCopy::Rules => 2,
        });
        write_instant(&mut w, part.fetched);
        w.u64(u64::from(part.failures));
        write_instant(&mut w, part.failing_since);
        w.instant(part.due);
        w.u64(u64::from(part.next_fetch));
        w.bool(robots.under_way().is_some());
        if let Some((fetch, departs)) = robots.under_way() {
            w.u64(u64::from(fetch));
            w.instant(departs);
        }
        Some(HostRecord { text: w.finish(), keep_until })
    }

    /// Make `host`'s state the one `record` holds ([`Registry::host_record`]'s text; `None`: nothing is
    /// remembered of the host, as for one never seen), whatever this registry held of it, and `robots` what the
    /// record says of robots.txt ([`RobotsFile::adopt`]). `rules` is the [`robots_row`] of the copy the record
    /// names: `Some(None)` when there is none (a row of another copy counts as none), `None` when not read yet;
    /// then, if the record names rules `robots` does not hold, nothing changes and the answer is false (read the
    /// row and adopt again). True once adopted. A record or a row that cannot be read (not a record, another
    /// host's, another version, malformed) is an error naming what is wrong, and nothing changes: see
    /// [`Registry::departed_elsewhere`].
    pub fn adopt_host(
        &mut self,
        host: &HostKey,
        record: Option<&str>,
        robots: &mut RobotsFile,
        rules: Option<Option<&str>>,
        now: Instant,
    ) -> Result<bool, Error> {
        if self.policy().group_by == crate::GroupBy::Site {
            return Err(Error::Unsupported { what: "groupBy 'site' in a store shared by several processes" });
        }
        let (state, seen, record, under_way) = match record {
            Some(text) => self.read_record(host, text, now)?,
            None => {
                // fetches of robots.txt and concurrency permits are numbered from a random start: a process whose
                // record expired while another's fetch was under way, or another's permit outlived its lease,
                // never hands out that number again (its late report, or release, would be taken for the new one)
                let next_fetch = self.random.next_u64() as u32;
                let mut state = HostState::new(&self.limits_of(host));
                state.number_permits_from(u64::from(self.random.next_u64() as u32) + 1);
                let none = RobotsRecord {
                    copy: RobotsCopy::None,
                    fetched: None,
                    failures: 0,
                    failing_since: None,
                    due: Instant::ZERO,
                    next_fetch,
                };
                (state, self.floor, none, None)
            }
        };
        let rules = match rules {
            Some(Some(row)) => {
                let (fetched, text) = read_robots_row(row)?;
                Some((record.fetched == Some(fetched)).then_some(text))
            }
            Some(None) => Some(None),
            None => None,
        };
        // the host is tracked first (it may be refused at the host bound), and its state set once robots.txt's
        // part is taken on
        let at = match self.hosts.find(host) {
            Some(at) => at,
            None => self.track(host, seen)?,
        };
        if !robots.adopt(record, under_way, rules) {
            return Ok(false);
        }
        self.hosts.set(at, state, seen);
        self.last_seen = self.last_seen.max(seen);
        Ok(true)
    }

    /// A record's host state, its clock, and its robots.txt part, checked to be `host`'s.
    #[allow(clippy::type_complexity)]
    fn read_record(
        &self,
        host: &HostKey,
        text: &str,
        now: Instant,
    ) -> Result<(HostState, Instant, RobotsRecord, Option<(u32, Instant)>), Error> {
        let other_version = |version| {
            let reads = format!("this build reads {} and {RECORD_VERSION}", RECORD_VERSION - 1);
            unreadable(format!("a host record of version {version} ({reads})"))
        };
        if text.trim_ascii_start().starts_with(MAGIC) {
            // a record of version 4 or before: a snapshot's magic, then its version
            let mut r = Reader::new(text)?;
            let version = r.u64("version");
            return Err(match r.failed() {
                false => other_version(version),
                true => unreadable("malformed: expected version"),
            });
        }
        let mut r = Reader::record(text)?;
        // the version before this one too (a fleet part upgraded reads the others' records): it is the snapshot
        // format before, which the state's reader knows
        let version = r.u64("version");
        if !r.failed() && version != u64::from(RECORD_VERSION) && version != u64::from(RECORD_VERSION - 1) {
            return Err(other_version(version));
        }
        let format = (version as u32).saturating_sub(1).min(SNAPSHOT_VERSION);
        let seen = Instant::from_nanos(r.u64("host clock"));
        if !r.failed() && seen.saturating_duration_since(now) > MAX_CLOCK_GAP {
            // the host's clock is the latest instant a decision about it saw: one far ahead of every clock of the
            // fleet would hold each decision on the host to it, and no wait would ever end
            let ahead = seen.saturating_duration_since(now).as_secs();
            return Err(unreadable(format!("its clock is {ahead} s ahead of this process's (more than a day)")));
        }
        r.set_base(seen);
        let key = r.str("host");
        if !r.failed() && key != host.as_str() {
            return Err(unreadable(format!("the record of {key:?}, not of {:?}", host.as_str())));
        }
        let limits = self.limits_of(host);
        let mut state = HostState::read(&mut r, format, seen, Form::Record(&limits));
        let copy = match r.u64("robots.txt copy") {
            0 => RobotsCopy::None,
            1 => RobotsCopy::Everything,
            2 => RobotsCopy::Rules,
            _ => {
                r.fail("robots.txt copy (0, 1 or 2)");
                RobotsCopy::None
            }
        };
        let fetched = read_instant(&mut r, "robots.txt fetched");
        let failures = r.u32("robots.txt failures");
        let failing_since = read_instant(&mut r, "robots.txt failing since");
        let due = r.instant("robots.txt due");
        let next_fetch = r.u32("robots.txt next fetch");
        let under_way = r.bool("robots.txt fetch flag").then(|| (r.u32("fetch"), r.instant("fetch departure")));
        r.finish()?;
        state.apply_limits(&limits, limits.rate_per_sec);
        Ok((state, seen, RobotsRecord { copy, fetched, failures, failing_since, due, next_fetch }, under_way))
    }

    /// A request to `host` left at `at` without this registry knowing (see [`HostState::departed_elsewhere`]):
    /// how a process that paced the host on its own while the shared store was out of reach hands its last
    /// departure to the host's shared state, and how a host whose record cannot be read is rebuilt: as though a
    /// request had just departed, never a fresh burst.
    pub fn departed_elsewhere(&mut self, host: &HostKey, at: Instant) -> Result<(), Error> {
        let (state, _, _) = self.state_at(host, super::Slot::NONE, at)?;
        state.departed_elsewhere(at);
        Ok(())
    }
}

/// The row of a copy of robots.txt rules fetched at `fetched`: the text a record's [`RobotsCopy::Rules`] stands
/// for, kept beside the records ([`read_robots_row`] reads it back).
pub fn robots_row(fetched: Instant, text: &str) -> String {
    let mut w = Writer::new();
    w.u64(u64::from(SNAPSHOT_VERSION));
    w.u64(fetched.as_nanos());
    w.str(text);
    w.finish()
}

/// When a [`robots_row`] was fetched and its text, or an error naming what is wrong with it.
pub fn read_robots_row(row: &str) -> Result<(Instant, &str), Error> {
    let mut r = Reader::new(row)?;
    let version = r.u64("version");
    // its layout has not changed since format 6, when it came
    if !r.failed() && !(6..=u64::from(SNAPSHOT_VERSION)).contains(&version) {
        let reads = format!("this build reads 6 to {SNAPSHOT_VERSION}");
        return Err(unreadable(format!("a robots.txt row of version {version} ({reads})")));
    }
    let fetched = Instant::from_nanos(r.u64("robots.txt fetched"));
    let text = r.str("robots.txt text");
    r.finish()?;
    Ok((fetched, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Layer;
    use crate::policy::Policy;
    use crate::robots::RobotsTiming;

    fn key(s: &str) -> HostKey {
        HostKey::parse(s).unwrap()
    }

    fn ms(ms: u64) -> Instant {
        Instant::from_millis(1_700_000_000_000 + ms)
    }

    fn policy() -> Policy {
        Policy { rate_per_sec: 5.0, burst_capacity: 1.0, ..Policy::default() }
    }

    #[test]
    fn a_record_carries_what_a_host_owes_to_another_registry() {
        let h = key("example.com");
        let file = RobotsFile::new(RobotsTiming::default());
        let (mut a, mut b) = (Registry::new(policy()).unwrap(), Registry::new(policy()).unwrap());
        assert_eq!(a.host_record(&h, &file, ms(0)), None, "a host never seen has nothing to remember");
        assert!(a.acquire(&h, ms(0)).unwrap().wait.is_zero());
        let record = a.host_record(&h, &file, ms(0)).unwrap();
        // fresh again once its departure's spacing (200 ms) and the margin after it have passed
        assert!(record.keep_until > ms(200) && record.keep_until < ms(1000), "{:?}", record.keep_until);
        let mut robots = RobotsFile::new(RobotsTiming::default());
        assert!(b.adopt_host(&h, Some(&record.text), &mut robots, None, ms(0)).unwrap());
        let d = b.acquire(&h, ms(10)).unwrap();
        assert_eq!((d.departs, d.layer), (ms(200), Layer::Burst));
        // and back: the first registry now owes the second's reservation too
        a.adopt_host(&h, Some(&b.host_record(&h, &file, ms(10)).unwrap().text), &mut robots, None, ms(0)).unwrap();
        assert_eq!(a.acquire(&h, ms(10)).unwrap().departs, ms(400));
        // nothing remembered: as a host never seen
        a.adopt_host(&h, None, &mut robots, None, ms(0)).unwrap();
        assert!(a.acquire(&h, ms(20)).unwrap().wait.is_zero());
    }

    /// A registry under `policy` that reserved one departure to `h` at 0, and `h`'s record then.
    fn one_departure(policy: Policy, h: &HostKey) -> (Registry, String) {
        let mut r = Registry::new(policy).unwrap();
        r.acquire(h, ms(0)).unwrap();
        let text = r.host_record(h, &RobotsFile::new(RobotsTiming::default()), ms(0)).unwrap().text;
        (r, text)
    }

    #[test]
    fn a_record_that_cannot_be_read_is_an_error_and_changes_nothing() {
        let h = key("example.com");
        let (mut r, text) = one_departure(policy(), &h);
        let other = text.replace("11:example.com", "11:example.org");
        let newer = text.replacen(&format!(" {RECORD_VERSION} "), " 9 ", 1);
        for (bad, says) in [
            ("", "not a hostpace snapshot"),
            ("{\"a\":1}", "not a hostpace snapshot"),
            (&other[..], "\"example.org\""),
            (&newer[..], "version 9"),
            (&text[..text.len() / 2], "malformed"),
            (&format!("{text} 1"), "after the last"),
        ] {
            let mut robots = RobotsFile::new(RobotsTiming::default());
            let err = r.adopt_host(&h, Some(bad), &mut robots, None, ms(0)).unwrap_err().to_string();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
        assert_eq!(r.acquire(&h, ms(1)).unwrap().departs, ms(200), "the host's debt is kept");
    }

    #[test]
    fn a_record_whose_clock_is_more_than_a_day_ahead_cannot_be_read() {
        // its instants hold every decision about the host to its clock: no wait would end in a lifetime
        let h = key("example.com");
        let day = 24 * 3600 * 1000;
        let mut ahead = Registry::new(policy()).unwrap();
        ahead.acquire(&h, ms(day + 1000)).unwrap();
        let text = ahead.host_record(&h, &RobotsFile::new(RobotsTiming::default()), ms(day + 1000)).unwrap().text;
        let (mut r, _) = one_departure(policy(), &h);
        let mut robots = RobotsFile::new(RobotsTiming::default());
        let err = r.adopt_host(&h, Some(&text), &mut robots, None, ms(0)).unwrap_err().to_string();
        assert!(err.contains("its clock is 86401 s ahead"), "{err}");
        assert_eq!(r.acquire(&h, ms(1)).unwrap().departs, ms(200), "nothing changed");
        // within a day of this clock, it is read
        assert!(r.adopt_host(&h, Some(&text), &mut robots, None, ms(2000)).unwrap());
    }

    #[test]
    fn a_host_adopted_with_no_record_numbers_its_permits_from_a_random_start() {
        // a process whose permit outlived the host's record releases it late: that number is not another's now
        let h = key("example.com");
        let policy = Policy { max_concurrency: 1, ..policy() };
        let robots = RobotsFile::new(RobotsTiming::default());
        let permit = |seed| {
            let mut r = Registry::new(policy.clone()).unwrap();
            r.set_random(crate::Random::new(seed));
            r.adopt_host(&h, None, &mut robots.clone(), None, ms(0)).unwrap();
            r.acquire(&h, ms(0)).unwrap().permit.unwrap().id
        };
        let (a, b) = (permit(1), permit(2));
        assert!(a != b && a > 1 && b > 1, "{a} {b}");
        assert!(a <= 1 << 32 && b <= 1 << 32, "exact as a JS number: {a} {b}");
    }

    #[test]
    fn a_record_leaves_out_what_the_policy_settles_and_reads_back_whole() {
        let h = key("host1234.example");
        let file = RobotsFile::new(RobotsTiming::default());
        let quota = Some(crate::policy::Quota { limit: 1000, window_sec: 3600.0 });
        let policy = Policy { rate_per_sec: 2.0, burst_capacity: 2.0, quota, ..Policy::default() };
        let (r, text) = one_departure(policy.clone(), &h);
        assert!(text.starts_with(&format!("hpr {RECORD_VERSION} ")), "{text}");
        // no bucket spacing (500000000 ns), a quota's shape in short, no rate level at the configured rate
        assert!(!text.contains("500000000") && text.contains(" 1e3 36e11 "), "{text}");
        assert!(text.len() <= 120, "{} bytes: {text}", text.len());
        let mut other = Registry::new(policy).unwrap();
        let mut robots = RobotsFile::new(RobotsTiming::default());
        assert!(other.adopt_host(&h, Some(&text), &mut robots, None, ms(0)).unwrap());
        assert_eq!(other.host(&h), r.host(&h));
        assert_eq!(other.host_record(&h, &file, ms(0)).unwrap().text, text);
    }

    #[test]
    fn a_record_of_an_earlier_version_is_refused_naming_it() {
        let h = key("example.com");
        let mut r = Registry::new(policy()).unwrap();
        let mut robots = RobotsFile::new(RobotsTiming::default());
        let earlier = "hostpace-snapshot-1 4 1700000000000000000 11:example.com 200000000 0 1 ~40";
        let err = r.adopt_host(&h, Some(earlier), &mut robots, None, ms(0)).unwrap_err().to_string();
        let reads = format!("this build reads {} and {RECORD_VERSION}", RECORD_VERSION - 1);
        assert!(err.contains(&format!("a host record of version 4 ({reads})")), "{err}");
        for bad in ["hpr", "hpr x", "hpr 5e0", "hostpace-snapshot-1"] {
            assert!(r.adopt_host(&h, Some(bad), &mut robots, None, ms(0)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_record_of_the_version_before_is_read_as_written() {
        // a fleet upgraded in part: what an older process wrote (the version before) is read as it was (a host
        // without permits: its layout is the same in both)
        let h = key("example.com");
        let (r, text) = one_departure(policy(), &h);
        let before = text.replacen(&format!("hpr {RECORD_VERSION} "), &format!("hpr {} ", RECORD_VERSION - 1), 1);
        assert_ne!(before, text);
        let mut other = Registry::new(policy()).unwrap();
        let mut robots = RobotsFile::new(RobotsTiming::default());
        assert!(other.adopt_host(&h, Some(&before), &mut robots, None, ms(0)).unwrap(), "{before}");
        assert_eq!(other.host(&h), r.host(&h));
    }

    #[test]
    fn a_rebuilt_host_owes_a_departure_now_and_grants_no_burst() {
        let h = key("example.com");
        let mut r = Registry::new(Policy { rate_per_sec: 5.0, burst_capacity: 5.0, ..Policy::default() }).unwrap();
        r.departed_elsewhere(&h, ms(0)).unwrap();
        let d = r.acquire(&h, ms(0)).unwrap();
        assert_eq!((d.departs, d.layer), (ms(200), Layer::Burst));
    }

    #[test]
    fn a_host_without_a_record_numbers_its_robots_fetches_apart_from_an_earlier_fetch() {
        // a fetch handed out by one process (number 0 of a fresh file), its record expired since: another process
        // that finds no record hands out fetches that the first one's late report cannot be taken for
        let h = key("example.com");
        let timing = RobotsTiming::default();
        let mut first = RobotsFile::new(timing);
        assert_eq!(first.start(ms(0)), Some(0));
        let mut r = Registry::new(policy()).unwrap();
        r.set_random(crate::host::Random::new(7));
        let mut theirs = RobotsFile::new(timing);
        assert!(r.adopt_host(&h, None, &mut theirs, None, ms(0)).unwrap());
        let fetch = theirs.start(ms(3000)).unwrap();
        assert_ne!(fetch, 0);
        assert!(!theirs.is_current(0), "the late report of fetch 0 is not this one's");
    }

    #[test]
    fn robots_txt_travels_in_the_record_and_its_rules_in_their_row() {
        let h = key("example.com");
        let timing = RobotsTiming::default();
        let r = Registry::new(policy()).unwrap();
        let mut file = RobotsFile::new(timing);
        let fetch = file.start(ms(0)).unwrap();
        let record = r.host_record(&h, &file, ms(0)).unwrap();
        let mut other = Registry::new(policy()).unwrap();
        let mut theirs = RobotsFile::new(timing);
        assert!(other.adopt_host(&h, Some(&record.text), &mut theirs, None, ms(0)).unwrap());
        assert_eq!(theirs.under_way(), Some((fetch, ms(0))), "the fetch under way is the fleet's lease");
        assert!(theirs.awaited(ms(1)) && !theirs.fetch_due(ms(1)), "another process waits for it");
        let text = "User-agent: *\nDisallow: /private\n";
        file.fetched(200, text, ms(50));
        let record = r.host_record(&h, &file, ms(50)).unwrap();
        assert!(record.keep_until >= ms(50).saturating_add(timing.max_age), "kept while the copy is");
        let before = other.host(&h).cloned();
        assert!(!other.adopt_host(&h, Some(&record.text), &mut theirs, None, ms(0)).unwrap(), "rules it lacks");
        assert_eq!(other.host(&h).map(|s| s.counters().decisions), before.map(|s| s.counters().decisions));
        let row = robots_row(file.fetched_at().unwrap(), text);
        assert_eq!(read_robots_row(&row).unwrap(), (ms(50), text));
        assert!(other.adopt_host(&h, Some(&record.text), &mut theirs, Some(Some(&row)), ms(0)).unwrap());
        let disallowed = theirs.verdict("hostpace", "http://example.com/private/x", ms(60));
        assert!(matches!(disallowed, crate::robots::Verdict::Disallowed(_)));
        // the row of another copy, or none: nothing is known of the copy, and a fetch is due at once
        let older = robots_row(ms(40), text);
        for rules in [Some(&older[..]), None] {
            let mut lost = RobotsFile::new(timing);
            assert!(other.adopt_host(&h, Some(&record.text), &mut lost, Some(rules), ms(0)).unwrap());
            assert!(lost.fetch_due(ms(60)));
        }
        assert!(read_robots_row(&record.text).is_err());
        assert!(other.adopt_host(&h, Some(&record.text), &mut theirs, Some(Some("garbage")), ms(0)).is_err());
    }
}
