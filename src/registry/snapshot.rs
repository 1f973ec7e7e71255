//! A registry's state for persistence, in one format: the compact text of [`crate::compact`] (integers and
//! length-prefixed strings, floats as their IEEE bits), exact to the nanosecond and small to decode. The JS
//! package's `Limiter.snapshot()` returns it and the gateway stores it.

use super::Registry;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::host::{Form, HostState, Layer};
use crate::host_key::HostKey;
use crate::overrides::{read_rules, write_rules, Rule};
use crate::policy::Policy;
use crate::time::Instant;

/// The snapshot format version this build writes: 7, or the newest format a layer's state first appears in (the list
/// of layers, in `src/layers/mod.rs`, names the format each layer came with). It reads every format from 1: one
/// older than a layer's has no state nor wait counter of it (the layer starts afresh, its knob off); format 6 has no
/// owner of a site's concurrency permit (each read as no host's: found for any of the site's hosts); format 5 has
/// no `groupBy` nor `siteLimits` in its policy (read as per host); format 4 has no `jitter` in its policy (read as
/// 0), and keeps only when each concurrency permit ends (read as the lease of a departure that went); format 3 has
/// instants in nanoseconds since the epoch rather than from the registry's latest instant; format 2 has no pushback
/// record either, and no clock of a host's own (each host's is the registry's latest instant); format 1 has neither,
/// nor a deadline for a server's rate cap (one it holds lapses [`crate::host::SERVER_POLICY_TTL`] after the snapshot
/// was taken).
pub const SNAPSHOT_VERSION: u32 = if Layer::NEWEST_FORMAT > 7 { Layer::NEWEST_FORMAT } else { 7 };

/// Whether this build reads snapshots of format `version`.
fn reads(version: u32) -> bool {
    (1..=SNAPSHOT_VERSION).contains(&version)
}

/// All of a registry's state ([`Registry::snapshot`]; [`Snapshot::encode`] writes it as text). Instants are in
/// the clock the registry was driven with, so persist snapshots only from an epoch-based clock if they must
/// survive a process restart.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Format version ([`SNAPSHOT_VERSION`]).
    pub version: u32,
    /// When the snapshot was taken.
    pub taken_at: Instant,
    /// The latest instant the registry had seen.
    pub last_seen: Instant,
    /// The instant a host not tracked is created at, at the earliest (the latest instant hosts were evicted at).
    pub floor: Instant,
    /// The policy in force.
    pub policy: Policy,
    /// The operators' rules ([`Registry::set_rule`]), hosts' by name, then sites' by domain.
    pub rules: Vec<Rule>,
    /// Every tracked host's key, state and own clock (the latest instant it was decided at), in the registry's
    /// order (the order hosts were first seen, kept by evictions; a restored registry keeps it).
    pub hosts: Vec<(HostKey, HostState, Instant)>,
}

/// The snapshot text (see [`Snapshot::encode`]).
fn write_snapshot<'a>(
    version: u32,
    taken_at: Instant,
    (last_seen, floor): (Instant, Instant),
    policy: &Policy,
    rules: impl ExactSizeIterator<Item = &'a Rule>,
    hosts: impl ExactSizeIterator<Item = (&'a HostKey, &'a HostState, Instant)>,
) -> String {
    let mut w = Writer::new();
    w.u64(u64::from(version));
    w.u64(taken_at.as_nanos());
    w.u64(last_seen.as_nanos());
    // every later instant from the registry's latest (so that one state is one text, whenever it is taken)
    w.set_base(last_seen);
    w.instant(floor);
    policy.write(&mut w);
    write_rules(&mut w, rules);
    w.u64(hosts.len() as u64);
    for (key, state, seen) in hosts {
        w.str(key.as_str());
        state.write(&mut w, Form::Snapshot);
        w.instant(seen);
    }
    w.finish()
}

/// The error for a snapshot of another format version.
fn other_version(version: u32) -> Error {
    Error::InvalidSnapshot { reason: format!("version {version} (this build reads 1 to {SNAPSHOT_VERSION})") }
}

/// The error for a snapshot holding more hosts than its policy allows.
fn too_many_hosts(count: u64, max_hosts: u32) -> Error {
    Error::InvalidSnapshot { reason: format!("{count} hosts, more than maxHosts {max_hosts}") }
}

impl Snapshot {
    /// The snapshot as compact text (integers and length-prefixed strings; floats as IEEE bits), in this build's
    /// format ([`SNAPSHOT_VERSION`]) whichever format this build read it from: exact for every instant, and small
    /// to decode. [`Snapshot::decode`] reads it back.
    pub fn encode(&self) -> String {
        // in this build's format, whichever it was read from (the states are this build's); a version this build
        // does not read is kept, so the text is refused as the snapshot is
        let version = if reads(self.version) { SNAPSHOT_VERSION } else { self.version };
        let hosts = self.hosts.iter().map(|(k, s, seen)| (k, s, *seen));
        write_snapshot(version, self.taken_at, (self.last_seen, self.floor), &self.policy, self.rules.iter(), hosts)
    }

    /// Read [`Snapshot::encode`]'s text; a malformed one is an error saying what was expected.
    pub fn decode(text: &str) -> Result<Snapshot, Error> {
        let mut r = Reader::new(text)?;
        let version = r.u32("version");
        if !reads(version) && !r.failed() {
            return Err(other_version(version));
        }
        let taken_at = Instant::from_nanos(r.u64("taken at"));
        let last_seen = Instant::from_nanos(r.u64("last seen"));
        if version >= 4 {
            r.set_base(last_seen);
        }
        let floor = if version >= 3 { r.instant("floor") } else { last_seen };
        let policy = Policy::read(&mut r, version);
        let rules = if version >= 5 { read_rules(&mut r)? } else { Vec::new() };
        let count = r.u64("host count");
        if count > u64::from(policy.max_hosts) {
            return Err(too_many_hosts(count, policy.max_hosts));
        }
        let mut hosts = Vec::with_capacity(count.min(1 << 16) as usize);
        for _ in 0..count {
            let name = r.str("host");
            let state = HostState::read(&mut r, version, taken_at, Form::Snapshot);
            let seen = if version >= 3 { r.instant("host's latest instant") } else { last_seen };
            if r.failed() {
                break;
            }
            let key = match name.starts_with("*.") {
                true => HostKey::parse_site(name)?,
                false => {
                    HostKey::parse(name).map_err(|e| Error::InvalidSnapshot { reason: format!("bad host key: {e}") })?
                }
            };
            hosts.push((key, state, seen));
        }
        r.finish()?;
        Ok(Snapshot { version, taken_at, last_seen, floor, policy, rules, hosts })
    }
}

impl Registry {
    /// [`Registry::snapshot`] written straight to [`Snapshot::encode`]'s text, without copying the hosts' state.
    pub fn encode_snapshot(&self, now: Instant) -> String {
        let (taken_at, clocks) = (now.max(self.last_seen), (self.last_seen, self.floor));
        write_snapshot(
            SNAPSHOT_VERSION,
            taken_at,
            clocks,
            &self.policy,
            self.rules.list().into_iter(),
            self.hosts.iter(),
        )
    }

    /// All state, for persistence.
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        Snapshot {
            version: SNAPSHOT_VERSION,
            taken_at: now.max(self.last_seen),
            last_seen: self.last_seen,
            floor: self.floor,
            policy: self.policy.clone(),
            rules: self.rules().into_iter().cloned().collect(),
            hosts: self.hosts.iter().map(|(k, s, seen)| (k.clone(), s.clone(), seen)).collect(),
        }
    }

    /// Rebuild a registry from a snapshot. Every instant is kept as it was, so a restored host owes exactly what
    /// it owed: no token, slot or cooldown is granted by a restart.
    pub fn restore(snapshot: Snapshot) -> Result<Registry, Error> {
        if !reads(snapshot.version) {
            return Err(other_version(snapshot.version));
        }
        let mut registry = Registry::new(snapshot.policy)?;
        for rule in snapshot.rules {
            registry.set_rule(rule).map_err(|e| Error::InvalidSnapshot { reason: e.to_string() })?;
        }
        registry.last_seen = snapshot.last_seen;
        registry.floor = snapshot.floor;
        if snapshot.hosts.len() > registry.limits.max_hosts as usize {
            return Err(too_many_hosts(snapshot.hosts.len() as u64, registry.limits.max_hosts));
        }
        for (key, mut state, seen) in snapshot.hosts {
            let limits = registry.limits_of(&key);
            state.apply_limits(&limits, limits.rate_per_sec);
            if registry.hosts.find(&key).is_some() {
                return Err(Error::InvalidSnapshot { reason: format!("host {key} appears twice") });
            }
            registry.hosts.insert(key, state, seen);
        }
        Ok(registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Layer;
    use crate::policy::Quota;
    use std::time::Duration;

    fn key(s: &str) -> HostKey {
        HostKey::parse(s).unwrap()
    }

    #[test]
    fn snapshot_restore_round_trips_through_text_without_granting_a_burst() {
        let mut r = Registry::new(Policy::default()).unwrap();
        let h = key("example.com");
        for _ in 0..4 {
            r.acquire(&h, Instant::ZERO).unwrap();
        }
        let text = r.snapshot(Instant::ZERO).encode();
        let mut restored = Registry::restore(Snapshot::decode(&text).unwrap()).unwrap();
        let d = restored.acquire(&h, Instant::ZERO).unwrap();
        assert_eq!((d.wait, d.layer), (Duration::from_millis(500), Layer::Burst));
    }

    #[test]
    fn compact_snapshots_round_trip_and_refuse_garbage() {
        let mut r = Registry::new(Policy {
            quota: Some(Quota { limit: 5, window_sec: 60.0 }),
            max_concurrency: 2,
            burst_justification: Some("a reason: with spaces".into()),
            ..Policy::default()
        })
        .unwrap();
        r.acquire(&key("example.com:8080"), Instant::from_secs(5)).unwrap();
        r.throttle(&key("b.example"), Some(Duration::from_secs(9)), Instant::from_secs(6)).unwrap();
        r.acquire(&key("a.example"), Instant::from_secs(6)).unwrap();
        let snap = r.snapshot(Instant::from_secs(7));
        let text = snap.encode();
        // written straight from the registry: the same text
        assert_eq!(r.encode_snapshot(Instant::from_secs(7)), text);
        assert_eq!(Snapshot::decode(&text), Ok(snap.clone()));
        for cut in [0, 10, text.len() / 2] {
            assert!(Snapshot::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
        // the last field is a number: cut short, it may still read, but never as the same snapshot
        assert_ne!(Snapshot::decode(&text[..text.len() - 1]), Ok(snap));
        assert!(Snapshot::decode(&format!("{text} 7")).is_err());
        let bad_host = text.replace("16:example.com:8080", "16:exa/ple.com:8080");
        assert!(Snapshot::decode(&bad_host).unwrap_err().to_string().contains("host"));
    }

    #[test]
    fn bad_snapshots_are_errors() {
        let r = Registry::new(Policy::default()).unwrap();
        let mut s = r.snapshot(Instant::ZERO);
        s.version = 99;
        assert!(Registry::restore(s.clone()).unwrap_err().to_string().contains("version 99"));
        assert!(Snapshot::decode(&s.encode()).unwrap_err().to_string().contains("version 99"));
        let s = Snapshot { policy: Policy { rate_per_sec: -1.0, ..Policy::default() }, ..r.snapshot(Instant::ZERO) };
        let decoded = Snapshot::decode(&s.encode()).unwrap();
        assert!(Registry::restore(decoded).unwrap_err().to_string().contains("ratePerSec"));
        let mut r = Registry::new(Policy::default()).unwrap();
        r.acquire(&key("a.example"), Instant::ZERO).unwrap();
        let text = r.encode_snapshot(Instant::ZERO).replace("9:a.example", "11:not a host/");
        assert!(Snapshot::decode(&text).is_err());
    }
}
