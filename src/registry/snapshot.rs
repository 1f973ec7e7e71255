//! A registry's state for persistence, in one format: the compact text of [`crate::compact`] (integers and
//! length-prefixed strings, floats as their IEEE bits), exact to the nanosecond and small to decode. The JS
//! package's `Limiter.snapshot()` returns it and the gateway stores it.

use super::Registry;
use crate::compact::{Reader, Writer};
use crate::error::Error;
use crate::host::HostState;
use crate::host_key::HostKey;
use crate::policy::Policy;
use crate::time::Instant;

/// The snapshot format version this build writes. It reads this one, format 2 (which has no pushback record) and
/// format 1 (which has none either, nor a deadline for a server's rate cap: one it holds lapses
/// [`crate::host::SERVER_POLICY_TTL`] after the snapshot was taken).
pub const SNAPSHOT_VERSION: u32 = 3;

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
    /// The latest instant the registry had seen (restored as is, so the restored registry clamps the same way).
    pub last_seen: Instant,
    /// The policy in force.
    pub policy: Policy,
    /// Every tracked host's state, in the registry's order (the order hosts were first seen, kept by evictions;
    /// a restored registry keeps it).
    pub hosts: Vec<(HostKey, HostState)>,
}

/// The snapshot text (see [`Snapshot::encode`]).
fn write_snapshot<'a>(
    version: u32,
    taken_at: Instant,
    last_seen: Instant,
    policy: &Policy,
    hosts: impl ExactSizeIterator<Item = (&'a HostKey, &'a HostState)>,
) -> String {
    let mut w = Writer::new();
    w.u64(u64::from(version));
    w.u64(taken_at.as_nanos());
    w.u64(last_seen.as_nanos());
    policy.write(&mut w);
    w.u64(hosts.len() as u64);
    for (key, state) in hosts {
        w.str(key.as_str());
        state.write(&mut w);
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
    /// The snapshot as compact text (integers and length-prefixed strings; floats as IEEE bits): exact for every
    /// instant, and small to decode. [`Snapshot::decode`] reads it back.
    pub fn encode(&self) -> String {
        let hosts = self.hosts.iter().map(|(k, s)| (k, s));
        write_snapshot(self.version, self.taken_at, self.last_seen, &self.policy, hosts)
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
        let policy = Policy::read(&mut r);
        let count = r.u64("host count");
        if count > u64::from(policy.max_hosts) {
            return Err(too_many_hosts(count, policy.max_hosts));
        }
        let mut hosts = Vec::with_capacity(count.min(1 << 16) as usize);
        for _ in 0..count {
            let name = r.str("host");
            let state = HostState::read(&mut r, version, taken_at);
            if r.failed() {
                break;
            }
            let key =
                HostKey::parse(name).map_err(|e| Error::InvalidSnapshot { reason: format!("bad host key: {e}") })?;
            hosts.push((key, state));
        }
        r.finish()?;
        Ok(Snapshot { version, taken_at, last_seen, policy, hosts })
    }
}

impl Registry {
    /// [`Registry::snapshot`] written straight to [`Snapshot::encode`]'s text, without copying the hosts' state.
    pub fn encode_snapshot(&self, now: Instant) -> String {
        write_snapshot(SNAPSHOT_VERSION, now.max(self.last_seen), self.last_seen, &self.policy, self.hosts.iter())
    }

    /// All state, for persistence.
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        Snapshot {
            version: SNAPSHOT_VERSION,
            taken_at: now.max(self.last_seen),
            last_seen: self.last_seen,
            policy: self.policy.clone(),
            hosts: self.hosts.iter().map(|(k, s)| (k.clone(), s.clone())).collect(),
        }
    }

    /// Rebuild a registry from a snapshot. Every instant is kept as it was, so a restored host owes exactly what
    /// it owed: no token, slot or cooldown is granted by a restart.
    pub fn restore(snapshot: Snapshot) -> Result<Registry, Error> {
        if !reads(snapshot.version) {
            return Err(other_version(snapshot.version));
        }
        let mut registry = Registry::new(snapshot.policy)?;
        registry.last_seen = snapshot.last_seen;
        if snapshot.hosts.len() > registry.limits.max_hosts as usize {
            return Err(too_many_hosts(snapshot.hosts.len() as u64, registry.limits.max_hosts));
        }
        for (key, mut state) in snapshot.hosts {
            state.apply_limits(&registry.limits, registry.limits.rate_per_sec);
            if registry.hosts.find(&key).is_some() {
                return Err(Error::InvalidSnapshot { reason: format!("host {key} appears twice") });
            }
            registry.hosts.insert(key, state);
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
        assert_eq!(Snapshot::decode(&text), Ok(snap));
        for cut in [0, 10, text.len() / 2, text.len() - 1] {
            assert!(Snapshot::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
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
