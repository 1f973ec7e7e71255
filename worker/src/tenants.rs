//! What each token may do at a host it shares with other tokens: the departures the gateway issued to it (so a
//! token can confirm, report on or cancel only its own), how many it may hold at once, and how far its reports
//! of "too many requests" reach. Pure and synchronous, kept in the host's [`crate::HostDesk`] and saved with it.
//!
//! The rules:
//!
//! - **A departure is issued to one token for one host**, under a random id (made by the caller of
//!   [`Tenants::issue`]: the host's object draws 128 bits from the runtime's CSPRNG). `/v1/depart` confirms it
//!   until it goes (then no more); `/v1/observe` or `/v1/cancel` ends it; it expires [`DEPARTURE_TTL`] after its
//!   departure.
//!   Anything else — an unknown id, another token's, one already used or expired — is refused
//!   ([`Refusal::NotYours`]). A permit rides on its departure: no other token's call gives it back (only that
//!   departure's report or cancel, the gateway's own fetch once its body has been passed on, or the end of the
//!   permit's lease).
//! - **Reservations are bounded per token**: a token holds at most `max_reservations` departures not yet
//!   confirmed at a host ([`Tenants::outstanding`]), whichever route reserved them; `/v1/cancel` gives one back
//!   (its permit at once; its slot in the host's schedule stays spent — a reserved instant is not handed to
//!   someone else — and counts against the token until its instant, so giving back buys no more), and one
//!   left unconfirmed [`RESERVATION_GRACE`] past its instant stops counting and can no longer be confirmed (it
//!   holds no future any more, and cannot be saved up to spend later; it may still be reported or cancelled). So
//!   however many requests a token sends, it holds at most `max_reservations` of a host's future departures,
//!   and another token asking is at most that many turns behind it: `/v1/acquire` beyond the bound is refused,
//!   `/v1/fetch` beyond it waits in the host's object until one of the token's own departures goes. The object of
//!   a site ([`crate::sites`]) keeps one `Tenants` per host and counts a token's reservations, and whether another
//!   token wants a host, over all of them ([`crate::HostDesk`]): the bound and the turns are the site's.
//! - **Tokens that want one host take turns**: while another token wants the host (it holds a reservation there
//!   that still counts, or took or waited for one within [`WANTS_FOR`]), a token's bound is one
//!   ([`Tenants::bound`]). A token's next reservation then comes only once its last one has gone, after those
//!   the others made meanwhile: a token that arrives waits behind the at most `max_reservations` departures each
//!   other token held before it asked, and from then on, between two of its departures, each other token has
//!   at most one. The host's pace is the same (a held `/v1/fetch` takes the next free turn as soon as its
//!   token's last one goes); what shrinks is how far ahead one token may reserve.
//! - **A permit is held for a departure until it goes, or [`RESERVATION_GRACE`] past its instant** (the core's
//!   rule: `hostpace::Concurrency`): a reservation takes one of the host's concurrency permits; its confirmation
//!   leases it for `CRAWL_LEASE_SEC` from the departure; one never confirmed gives it back at the grace's end,
//!   when it also stops counting against its token and can no longer be confirmed. So a token that reserves and
//!   never departs holds a permit for its wait and the grace, never for a lease.
//! - **Permits go by turns too**: while every concurrency permit of a host is held, the tokens waiting for one
//!   are recorded ([`Tenants::waits_for_permit`]); a token may take a free permit only while fewer other tokens
//!   come before it than there are free permits ([`Tenants::waiting_before`]): the waiting tokens that hold fewer
//!   permits, or as many and last issued a departure before it; and, for a token whose reservations let permits
//!   lapse (never confirmed; each counted until its departure expires), every other token that wants the host and
//!   let fewer lapse, waiting or between two of its requests. So a token holding every permit gives the next free
//!   one to a token that holds none, tokens wanting more permits than there are take them in turn, and a token
//!   that reserves without departing takes no permit from a token that uses its own: while another token wants
//!   the host, the permit it holds when that token comes is the only one it keeps from it. A permit rides on its
//!   departure until it goes back (the gateway's own fetch keeps it while its body is passed on; that is not
//!   saved: after a restart its token counts a permit fewer).
//! - **A report that blocks the host cools it for everyone, once per period while another token wants it**: a
//!   429/503, or a `RateLimit` / `X-RateLimit-*` quota at zero. A token's report reaches the host (the core's
//!   pushback: a cooldown or server block bounded by `maxBackoffSec`, and for the incidents of a streak the
//!   growing backoff and the slower pace), except when both hold: another token wants the host at that moment
//!   (it holds a reservation there that still counts, or took or waited for one within [`WANTS_FOR`]), and the
//!   same token's last report that reached the host came within twice `maxBackoffSec`. Then it cools only that
//!   token ([`Tenants::throttle_scope`]). So a token alone at a host is paced by every answer it gets, as the
//!   package paces a crawler (pushback that repeats slows the host); and one token, however many real
//!   departures it holds, holds the host at zero for other tokens that want it for at most one `maxBackoffSec`
//!   at a time, with at least as long open in between. A token that comes to the host (it did not want it) while
//!   the host's pushback is known only from other tokens' reports ([`Tenants::pushed_back_by_others_only`]: not
//!   from its own, nor from the gateway's own requests) finds that streak forgotten (the core's
//!   `Registry::forget_pushback`): no slower pace, no giving up, at most the cooldown in force, cut to
//!   `maxBackoffSec`. So what a token's reports did while it was alone never holds another token back by more
//!   than one cooldown. The gateway's own fetches (`/v1/fetch`, robots.txt) are not limited by this.

use hostpace::Instant;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::time::Duration;

/// Who stands for the gateway's own requests among the reporters of pushback (no token id is spelled so).
const GATEWAY: &str = "-";

/// How long past twice `maxBackoffSec` a reporter of pushback is remembered: a streak of pushback lasts no longer
/// after its last incident than a host given up on is left alone.
const REPORTERS_KEPT: Duration = hostpace::GIVE_UP_AFTER;

/// How long after its departure an issued departure may still be confirmed, reported or cancelled.
pub const DEPARTURE_TTL: Duration = Duration::from_secs(300);

/// How long after its instant an unconfirmed departure still counts against its token's reservations and may be
/// confirmed: the core's grace, at whose end its concurrency permit goes back ([`hostpace::RESERVATION_GRACE`]).
pub const RESERVATION_GRACE: Duration = hostpace::RESERVATION_GRACE;

/// How long after it last asked for a departure at a host a token counts as wanting the host (see the module).
pub const WANTS_FOR: Duration = Duration::from_secs(5);

/// How long after its last ask a token waiting for a permit still counts as waiting (a waiting caller asks again
/// at least every [`crate::desk::TURN_RECHECK`]).
pub const PERMIT_WAIT_STALE: Duration = Duration::from_secs(1);

/// The most issued departures a host keeps (the oldest are forgotten first; each token's own bound is smaller).
pub const MAX_ISSUED: usize = 4096;

/// One departure issued to a token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issued {
    /// The random id the caller holds.
    pub id: String,
    /// The token it was issued to (its [`crate::auth::token_id`]).
    pub token: String,
    /// The reserved departure, nanoseconds.
    pub departs_ns: u64,
    /// The concurrency permit riding on it.
    pub permit: Option<u64>,
    /// Confirmed with `/v1/depart`.
    pub departed: bool,
    /// No use is left in it: given back (or reported on) before its instant, when the slot it holds in the
    /// host's schedule still counts against its token until that instant; or gone with the gateway's own fetch,
    /// kept while its permit is in flight.
    pub ended: bool,
}

impl Issued {
    fn expired(&self, now: Instant) -> bool {
        Instant::from_nanos(self.departs_ns).saturating_add(DEPARTURE_TTL) <= now
    }

    /// When it stops counting against its token's reservations, unless confirmed first.
    fn counts_until(&self) -> Instant {
        let at = Instant::from_nanos(self.departs_ns);
        if self.ended {
            at
        } else {
            at.saturating_add(RESERVATION_GRACE)
        }
    }

    /// Whether it counts against its token at `now` (see [`Tenants::outstanding`]).
    fn counts(&self, now: Instant) -> bool {
        !self.departed && self.counts_until() > now
    }
}

/// What a use of a departure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// `/v1/depart`: confirm it (until [`Tenants::departed`] records that it went).
    Depart,
    /// `/v1/observe`: report what came back (once; ends it).
    Observe,
    /// `/v1/cancel`: give it back (ends it).
    Cancel,
}

/// Why a use was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a departure issued to this token for this host, or no longer usable (used, expired, cancelled).
    NotYours,
    /// Already confirmed (`/v1/depart` twice).
    AlreadyDeparted,
}

/// How far a token's report of 429/503 reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole fleet: the host's cooldown.
    Fleet,
    /// Only the reporting token.
    Tenant,
}

/// The tokens' business at one host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tenants {
    /// Departures issued and not yet ended, oldest first.
    issued: Vec<Issued>,
    /// Per token, when its last fleet-wide throttle report was applied (nanoseconds).
    fleet_throttles: Vec<(String, u64)>,
    /// Per token, a cooldown that applies to it alone, until (nanoseconds).
    own_cooldowns: Vec<(String, u64)>,
    /// Per token, when it last asked for a departure it took or waits for (nanoseconds; kept [`WANTS_FOR`], in
    /// memory only: not worth a storage write per ask, and a restarted object learns it again within one).
    asks: Vec<(String, u64)>,
    /// Per token waiting for a free permit, when it last asked (nanoseconds; kept [`PERMIT_WAIT_STALE`]; memory
    /// only).
    permit_waits: Vec<(String, u64)>,
    /// Per token, the count of departures issued here when it was last issued one, and that count (memory only;
    /// an entry per token the object has issued a departure to, and tokens are the gateway's configured ones).
    served: Vec<(String, u64)>,
    issues: u64,
    /// Per reporter whose block reached the host (a token, or [`GATEWAY`] for the gateway's own requests), when its
    /// last one did (nanoseconds; kept as long as a streak of pushback can last, [`REPORTERS_KEPT`] past
    /// `2 × maxBackoffSec`; memory only: a restarted object forgets no streak for a token that comes).
    reporters: Vec<(String, u64)>,
}

impl Tenants {
    /// The tenants as text, as the host's saved state kept them up to version 2 (read by [`Tenants::decode`] when
    /// such a state is restored; version 3 keeps [`SavedTenants`]): a line per entry, `d <id> <token> <departs>
    /// <permit|-> <state>` for a departure, `f <token> <at>` for a fleet-wide throttle, `c <token> <until>` for a
    /// token's own cooldown (instants in nanoseconds; a departure's state is 0 reserved, 1 confirmed, 2 ended early;
    /// ids and token ids hold no spaces). The tokens' asks are not kept.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // one gone with its permit in flight is not kept: after a restart its token holds a permit fewer
        for d in self.issued.iter().filter(|d| !(d.departed && d.ended)) {
            let permit = d.permit.map_or_else(|| "-".to_owned(), |p| p.to_string());
            let state = if d.ended { 2 } else { u8::from(d.departed) };
            let _ = writeln!(out, "d {} {} {} {permit} {state}", d.id, d.token, d.departs_ns);
        }
        for (token, at) in &self.fleet_throttles {
            let _ = writeln!(out, "f {token} {at}");
        }
        for (token, until) in &self.own_cooldowns {
            let _ = writeln!(out, "c {token} {until}");
        }
        out
    }

    /// Read [`Tenants::encode`]'s text; `None` if it is not such text.
    pub fn decode(text: &str) -> Option<Tenants> {
        let mut t = Tenants::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["d", id, token, departs, permit, state] => {
                    let state = ["0", "1", "2"].iter().position(|s| s == state)?;
                    t.issued.push(Issued {
                        id: (*id).to_owned(),
                        token: (*token).to_owned(),
                        departs_ns: departs.parse().ok()?,
                        permit: if *permit == "-" { None } else { Some(permit.parse().ok()?) },
                        departed: state & 1 == 1,
                        ended: state & 2 == 2,
                    })
                }
                ["f", token, at] => t.fleet_throttles.push(((*token).to_owned(), at.parse().ok()?)),
                ["c", token, until] => t.own_cooldowns.push(((*token).to_owned(), until.parse().ok()?)),
                _ => return None,
            }
        }
        Some(t)
    }

    /// Forget what has expired by `now`.
    fn prune(&mut self, now: Instant, max_backoff: Duration) {
        self.issued.retain(|d| !d.expired(now));
        let window = max_backoff.saturating_mul(2);
        self.fleet_throttles.retain(|(_, at)| Instant::from_nanos(*at).saturating_add(window) > now);
        self.own_cooldowns.retain(|(_, until)| Instant::from_nanos(*until) > now);
        self.asks.retain(|(_, at)| Instant::from_nanos(*at).saturating_add(WANTS_FOR) > now);
        let streak = window.saturating_add(REPORTERS_KEPT);
        self.reporters.retain(|(_, at)| Instant::from_nanos(*at).saturating_add(streak) > now);
        self.forget_stale_waits(now);
    }

    /// Forget the tokens that have not asked again for a permit within [`PERMIT_WAIT_STALE`] of `now`.
    fn forget_stale_waits(&mut self, now: Instant) {
        self.permit_waits.retain(|(_, last)| Instant::from_nanos(*last).saturating_add(PERMIT_WAIT_STALE) > now);
    }

    /// Permits `token` holds: on its reservations and on its departures that went and have not given theirs back,
    /// those its reservations let lapse included ([`Tenants::lapsed`]).
    fn permits_held(&self, token: &str) -> usize {
        self.issued.iter().filter(|d| d.token == token && d.permit.is_some()).count()
    }

    /// Permits `token`'s reservations let lapse by `now`: taken with a departure it never confirmed, they went back
    /// [`RESERVATION_GRACE`] past its instant (the core's rule). Each counts against the token until its departure
    /// expires ([`DEPARTURE_TTL`]).
    fn lapsed(&self, token: &str, now: Instant) -> usize {
        let lapsed = |d: &&Issued| d.permit.is_some() && !d.departed && d.counts_until() <= now && !d.expired(now);
        self.issued.iter().filter(|d| d.token == token).filter(lapsed).count()
    }

    /// The tokens that want the host at `now` (see [`Tenants::wants`]), each once.
    fn wanting(&self, now: Instant) -> Vec<&str> {
        let asking = self.asks.iter().filter(|(_, at)| Instant::from_nanos(*at).saturating_add(WANTS_FOR) > now);
        let holding = self.issued.iter().filter(|d| d.counts(now)).map(|d| d.token.as_str());
        let mut tokens: Vec<&str> = Vec::new();
        for token in asking.map(|(t, _)| t.as_str()).chain(holding) {
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        tokens
    }

    /// `token` was told at `now` to wait for a free permit: it waits, and wants the host ([`Tenants::asked`]).
    pub fn waits_for_permit(&mut self, token: &str, now: Instant) {
        self.asked(token, now);
        stamp(&mut self.permit_waits, token, now);
    }

    /// When `token` was last issued a departure here, as a count of departures issued (0: never).
    fn last_served(&self, token: &str) -> u64 {
        self.served.iter().find(|(t, _)| t == token).map_or(0, |s| s.1)
    }

    /// How many other tokens come before `token` at `now` for the next free permit (see the module): those waiting
    /// for one that hold fewer permits, or as many and were served before it; and, when `token` let permits lapse,
    /// every other token that wants the host and let fewer lapse.
    pub fn waiting_before(&mut self, token: &str, now: Instant) -> usize {
        self.forget_stale_waits(now);
        let lapsed = self.lapsed(token, now);
        if lapsed == 0 && self.permit_waits.iter().all(|(t, _)| t == token) {
            return 0; // no other token waits (every ask of a host without a concurrency limit): nothing to count
        }
        let (mine, served) = (self.permits_held(token), self.last_served(token));
        let waiting_before = |t: &str| {
            let theirs = self.permits_held(t);
            theirs < mine || (theirs == mine && self.last_served(t) < served)
        };
        let mut before: Vec<&str> =
            self.permit_waits.iter().map(|(t, _)| t.as_str()).filter(|t| *t != token && waiting_before(t)).collect();
        if lapsed > 0 {
            // a token that let permits lapse leaves the next one to a token that wants the host, even between two
            // of that token's requests, unless it let as many lapse
            for t in self.wanting(now) {
                if t != token && !before.contains(&t) && self.lapsed(t, now) < lapsed {
                    before.push(t);
                }
            }
        }
        before.len()
    }

    /// Permit `permit` went back: the departure it rode on is done with.
    pub fn permit_back(&mut self, permit: u64) {
        self.issued.retain(|d| !(d.ended && d.departed && d.permit == Some(permit)));
        for d in self.issued.iter_mut().filter(|d| d.permit == Some(permit)) {
            d.permit = None;
        }
    }

    /// `token` took a departure at `now`, or waits for one at its bound: it wants the host for [`WANTS_FOR`].
    pub fn asked(&mut self, token: &str, now: Instant) {
        stamp(&mut self.asks, token, now);
    }

    /// Whether nothing here matters any more at `now`: no departure issued within [`DEPARTURE_TTL`], and no
    /// token's cooldown, throttle, report, ask or wait for a permit that a turn still counts.
    pub fn idle(&mut self, now: Instant, max_backoff: Duration) -> bool {
        self.prune(now, max_backoff);
        self.issued.is_empty()
            && self.fleet_throttles.is_empty()
            && self.own_cooldowns.is_empty()
            && self.asks.is_empty()
            && self.permit_waits.is_empty()
            && self.reporters.is_empty()
    }

    /// The most unconfirmed reservations `token` may hold at `now`: `max` while no other token wants the host,
    /// one while another does (it holds a reservation here that still counts, or asked within [`WANTS_FOR`]).
    pub fn bound(&self, token: &str, max: usize, now: Instant) -> usize {
        if self.another_wants(token, now) {
            max.min(1)
        } else {
            max
        }
    }

    /// Whether `token` wants the host at `now`: it holds a reservation here that still counts, or asked within
    /// [`WANTS_FOR`].
    pub fn wants(&self, token: &str, now: Instant) -> bool {
        self.wanted_by(now, |t| t == token)
    }

    /// Whether a token `who` picks wants the host at `now` (see [`Tenants::wants`]).
    fn wanted_by(&self, now: Instant, who: impl Fn(&str) -> bool) -> bool {
        let asking = self.asks.iter().any(|(t, at)| who(t) && Instant::from_nanos(*at).saturating_add(WANTS_FOR) > now);
        asking || self.issued.iter().any(|d| who(&d.token) && d.counts(now))
    }

    /// The gateway's own request to the host (a `/v1/fetch` or robots.txt) was pushed back at `now`: that
    /// pushback is the host's, whoever comes later.
    pub fn gateway_pushed_back(&mut self, now: Instant) {
        self.reported(GATEWAY, now);
    }

    /// `reporter`'s block reached the host at `now`.
    fn reported(&mut self, reporter: &str, now: Instant) {
        self.reporters.retain(|(t, _)| t != reporter);
        self.reporters.push((reporter.to_owned(), now.as_nanos()));
    }

    /// Whether the host's pushback at `now` is known only from other tokens' reports: a token other than `token`
    /// reported a block that reached the host while a streak of it could last, and neither `token` nor the
    /// gateway's own requests were pushed back in that time.
    pub fn pushed_back_by_others_only(&mut self, token: &str, now: Instant, max_backoff: Duration) -> bool {
        self.prune(now, max_backoff);
        !self.reporters.is_empty() && self.reporters.iter().all(|(t, _)| t != token && t != GATEWAY)
    }

    /// Whether a token other than `token` wants the host at `now`: it holds a reservation here that still counts,
    /// or asked within [`WANTS_FOR`].
    fn another_wants(&self, token: &str, now: Instant) -> bool {
        self.wanted_by(now, |t| t != token)
    }

    /// Departures `token` holds at `now`, reserved and not yet confirmed (nor abandoned: see
    /// [`RESERVATION_GRACE`]), and the earliest of their instants.
    pub fn outstanding(&mut self, token: &str, now: Instant, max_backoff: Duration) -> (usize, Option<Instant>) {
        self.prune(now, max_backoff);
        let held = self.issued.iter().filter(|d| d.token == token && d.counts(now));
        held.fold((0, None), |(n, first), d| {
            let at = Instant::from_nanos(d.departs_ns);
            (n + 1, Some(first.map_or(at, |f: Instant| f.min(at))))
        })
    }

    /// Record departure `id` issued to `token` for `departs`, with `permit` (it waits for a permit no more).
    pub fn issue(&mut self, id: String, token: &str, departs: Instant, permit: Option<u64>) {
        self.permit_waits.retain(|(t, _)| t != token);
        self.issues += 1;
        match self.served.iter_mut().find(|(t, _)| t == token) {
            Some((_, at)) => *at = self.issues,
            None => self.served.push((token.to_owned(), self.issues)),
        }
        if self.issued.len() >= MAX_ISSUED {
            self.issued.remove(0);
        }
        self.issued.push(Issued {
            id,
            token: token.to_owned(),
            departs_ns: departs.as_nanos(),
            permit,
            departed: false,
            ended: false,
        });
    }

    /// Use departure `id` for `token` at `now`: the departure, or why not. A report or a cancel ends it.
    pub fn claim(&mut self, id: &str, token: &str, what: Use, now: Instant) -> Result<Issued, Refusal> {
        let at = self
            .issued
            .iter()
            .position(|d| d.id == id && d.token == token && !d.ended && !d.expired(now))
            .ok_or(Refusal::NotYours)?;
        match what {
            Use::Depart if self.issued[at].departed => Err(Refusal::AlreadyDeparted),
            // one that stopped counting against its token can no longer go: a token cannot save departures up
            Use::Depart if self.issued[at].counts_until() <= now => Err(Refusal::NotYours),
            Use::Depart => Ok(self.issued[at].clone()),
            // one ended before its instant keeps its slot counted until then: giving back is no way to reserve more
            Use::Observe | Use::Cancel
                if !self.issued[at].departed && Instant::from_nanos(self.issued[at].departs_ns) > now =>
            {
                let d = self.issued[at].clone();
                self.issued[at].ended = true;
                self.issued[at].permit = None;
                Ok(d)
            }
            Use::Observe | Use::Cancel => Ok(self.issued.remove(at)),
        }
    }

    /// Departure `id` of `token` was reserved again for `departs` (held behind a cooldown the host began after it
    /// was reserved): it counts against its token, may be confirmed and expires from that instant.
    pub fn moved(&mut self, id: &str, token: &str, departs: Instant) {
        if let Some(d) = self.issued.iter_mut().find(|d| d.id == id && d.token == token) {
            d.departs_ns = departs.as_nanos();
        }
    }

    /// Record that departure `id` of `token` went (confirmed): it stops counting as a reservation, and its
    /// token waits for no permit. One that `ends` going (the gateway's own fetch, reported without its id) can no
    /// longer be used, and is forgotten once its permit, if any, goes back ([`Tenants::permit_back`]).
    pub fn departed(&mut self, id: &str, token: &str, ends: bool) {
        if let Some(at) = self.issued.iter().position(|d| d.id == id && d.token == token) {
            if ends && self.issued[at].permit.is_none() {
                self.issued.remove(at);
            } else {
                self.issued[at].departed = true;
                self.issued[at].ended |= ends;
            }
        }
    }

    /// How far `token`'s report of 429/503 at `now` reaches, recording a fleet-wide one (see the module): the
    /// fleet, unless another token wants the host and `token`'s last fleet-wide report is within twice
    /// `max_backoff`. While no other token wants the host there is no one to hold back, and every report reaches it.
    pub fn throttle_scope(&mut self, token: &str, now: Instant, max_backoff: Duration) -> Scope {
        self.prune(now, max_backoff);
        if self.fleet_throttles.iter().any(|(t, _)| t == token) && self.another_wants(token, now) {
            return Scope::Tenant;
        }
        // the period runs from the token's last fleet-wide report
        self.fleet_throttles.retain(|(t, _)| t != token);
        self.fleet_throttles.push((token.to_owned(), now.as_nanos()));
        self.reported(token, now);
        Scope::Fleet
    }

    /// Cool `token` alone until `until` (only extends).
    pub fn cool_tenant(&mut self, token: &str, until: Instant) {
        stamp(&mut self.own_cooldowns, token, until);
    }

    /// Until when `token` alone is cooled down, if it is at `now`.
    pub fn tenant_cooldown(&self, token: &str, now: Instant) -> Option<Instant> {
        self.own_cooldowns.iter().find(|(t, _)| t == token).map(|(_, u)| Instant::from_nanos(*u)).filter(|u| *u > now)
    }
}

/// What of the tenants the host's saved state keeps ([`Tenants::saved`]): the departures issued, each token's last
/// fleet-wide throttle and its own cooldown (instants in nanoseconds). The tokens' asks and permit waits are not
/// kept, nor a departure gone with its permit in flight (after a restart its token holds a permit fewer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedTenants {
    /// Departures issued and not yet ended, oldest first.
    pub issued: Vec<Issued>,
    /// Per token, when its last fleet-wide throttle report was applied.
    pub fleet_throttles: Vec<(String, u64)>,
    /// Per token, a cooldown that applies to it alone, until.
    pub own_cooldowns: Vec<(String, u64)>,
}

impl Tenants {
    /// What the host's saved state keeps of the tenants.
    pub fn saved(&self) -> SavedTenants {
        SavedTenants {
            issued: self.issued.iter().filter(|d| !(d.departed && d.ended)).cloned().collect(),
            fleet_throttles: self.fleet_throttles.clone(),
            own_cooldowns: self.own_cooldowns.clone(),
        }
    }

    /// The tenants [`Tenants::saved`] kept.
    pub fn restore(saved: SavedTenants) -> Tenants {
        let SavedTenants { issued, fleet_throttles, own_cooldowns } = saved;
        Tenants { issued, fleet_throttles, own_cooldowns, ..Tenants::default() }
    }
}

/// `token`'s instant in `list` moved to `at` if that is later (its entry made when it has none).
fn stamp(list: &mut Vec<(String, u64)>, token: &str, at: Instant) {
    match list.iter_mut().find(|(t, _)| t == token) {
        Some((_, was)) => *was = (*was).max(at.as_nanos()),
        None => list.push((token.to_owned(), at.as_nanos())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKOFF: Duration = Duration::from_secs(120);

    fn t(s: u64) -> Instant {
        Instant::from_secs(1_764_000_000 + s)
    }

    /// Two tokens at a host: one holding a departure with a permit, the other's gone, reported 429 and cooled alone.
    fn two_tokens() -> Tenants {
        let mut ts = Tenants::default();
        ts.issue("a1".into(), "token-1", t(10), Some(7));
        ts.issue("a2".into(), "token-2", t(11), None);
        ts.departed("a2", "token-2", false);
        ts.throttle_scope("token-2", t(12), BACKOFF);
        ts.cool_tenant("token-2", t(40));
        ts
    }

    #[test]
    fn tenants_survive_their_text() {
        let mut ts = two_tokens();
        ts.issue("a3".into(), "token-1", t(30), Some(8));
        ts.claim("a3", "token-1", Use::Cancel, t(12)).unwrap(); // ended early: still counted until t(30)
        let text = ts.encode();
        let back = Tenants::decode(&text).unwrap();
        assert_eq!((back.issued.clone(), back.encode()), (ts.issued.clone(), text.clone()));
        ts.asked("token-1", t(12));
        ts.waits_for_permit("token-2", t(12));
        assert_eq!(ts.encode(), text, "asks and waits are not kept");
        assert_eq!(Tenants::decode(""), Some(Tenants::default()));
        for bad in ["x", "d a b c - 0", "d a b 1 - 3", "d a b 1 - 01", "f a", "c a b", "d a b 1 x 0", "a b 1"] {
            assert_eq!(Tenants::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_departure_is_its_tokens_once_and_expires() {
        let mut ts = Tenants::default();
        ts.issue("a1".into(), "alice", t(10), Some(7));
        assert_eq!(ts.claim("a1", "mallory", Use::Observe, t(10)), Err(Refusal::NotYours));
        assert_eq!(ts.claim("a2", "alice", Use::Observe, t(10)), Err(Refusal::NotYours));
        assert!(ts.claim("a1", "alice", Use::Depart, t(10)).is_ok());
        assert!(ts.claim("a1", "alice", Use::Depart, t(10)).is_ok(), "confirmed again until it goes");
        ts.departed("a1", "alice", false);
        assert_eq!(ts.claim("a1", "alice", Use::Depart, t(10)), Err(Refusal::AlreadyDeparted));
        assert_eq!(ts.claim("a1", "alice", Use::Observe, t(11)).map(|d| d.permit), Ok(Some(7)));
        assert_eq!(ts.claim("a1", "alice", Use::Observe, t(11)), Err(Refusal::NotYours), "single use");
        ts.issue("a3".into(), "alice", t(20), None);
        assert_eq!(ts.claim("a3", "alice", Use::Observe, t(20 + 300)), Err(Refusal::NotYours), "expired");
    }

    #[test]
    fn reservations_are_counted_per_token_until_confirmed_cancelled_or_abandoned() {
        let mut ts = Tenants::default();
        for i in 0..3 {
            ts.issue(format!("m{i}"), "mallory", t(10 + i), None);
        }
        ts.issue("a".into(), "alice", t(20), None);
        assert_eq!(ts.outstanding("mallory", t(0), BACKOFF), (3, Some(t(10))));
        assert_eq!(ts.outstanding("alice", t(0), BACKOFF), (1, Some(t(20))));
        ts.claim("m0", "mallory", Use::Depart, t(10)).unwrap();
        assert_eq!(ts.outstanding("mallory", t(10), BACKOFF).0, 3, "not gone until confirmed");
        ts.departed("m0", "mallory", false);
        assert!(ts.claim("m0", "mallory", Use::Observe, t(10)).is_ok(), "a confirmed departure is reported on");
        ts.claim("m1", "mallory", Use::Cancel, t(10)).unwrap();
        assert_eq!(
            ts.outstanding("mallory", t(10), BACKOFF),
            (2, Some(t(11))),
            "given back: counted until its instant"
        );
        assert_eq!(ts.outstanding("mallory", t(11), BACKOFF), (1, Some(t(12))));
        assert_eq!(ts.outstanding("mallory", t(16), BACKOFF), (1, Some(t(12))), "counted until 5 s past its instant");
        assert_eq!(ts.outstanding("mallory", t(17), BACKOFF), (0, None), "then abandoned");
        assert_eq!(ts.claim("m2", "mallory", Use::Depart, t(17)), Err(Refusal::NotYours), "nor can it go any more");
        assert!(ts.claim("m2", "mallory", Use::Cancel, t(17)).is_ok(), "but it is still its token's to give back");
        ts.issue("f".into(), "alice", t(30), Some(3));
        ts.departed("f", "alice", true);
        assert_eq!(ts.claim("f", "alice", Use::Observe, t(30)), Err(Refusal::NotYours), "one that ends going is gone");
        ts.issue("m5".into(), "mallory", t(20), None);
        assert_eq!(ts.claim("m5", "mallory", Use::Cancel, t(20 + 300)), Err(Refusal::NotYours), "expired");
        assert_eq!(ts.outstanding("mallory", t(20 + 300), BACKOFF), (0, None));
    }

    #[test]
    fn a_tokens_throttle_reports_reach_the_fleet_once_per_period() {
        let mut ts = Tenants::default();
        // alice wants the host throughout: she holds a reservation that counts until t(405)
        ts.issue("a1".into(), "alice", t(400), None);
        assert_eq!(ts.throttle_scope("mallory", t(0), BACKOFF), Scope::Fleet);
        assert_eq!(ts.throttle_scope("mallory", t(119), BACKOFF), Scope::Tenant);
        assert_eq!(ts.throttle_scope("mallory", t(239), BACKOFF), Scope::Tenant);
        assert_eq!(ts.throttle_scope("alice", t(100), BACKOFF), Scope::Fleet, "another token's report counts");
        assert_eq!(ts.throttle_scope("mallory", t(240), BACKOFF), Scope::Fleet);
        ts.cool_tenant("mallory", t(300));
        ts.cool_tenant("mallory", t(250));
        assert_eq!(ts.tenant_cooldown("mallory", t(260)), Some(t(300)));
        assert_eq!(ts.tenant_cooldown("alice", t(260)), None);
        assert_eq!(ts.tenant_cooldown("mallory", t(300)), None);
    }

    #[test]
    fn a_token_alone_at_the_host_reaches_it_with_every_report() {
        let mut ts = Tenants::default();
        assert_eq!(ts.throttle_scope("mallory", t(0), BACKOFF), Scope::Fleet);
        assert_eq!(ts.throttle_scope("mallory", t(1), BACKOFF), Scope::Fleet, "no other token wants the host");
        assert_eq!(ts.throttle_scope("mallory", t(2), BACKOFF), Scope::Fleet);
        // alice asks: from then on, within the period of mallory's last fleet-wide report, only mallory is cooled
        ts.asked("alice", t(3));
        assert_eq!(ts.throttle_scope("mallory", t(4), BACKOFF), Scope::Tenant, "alice asked 1 s ago");
        assert_eq!(ts.throttle_scope("mallory", t(7), BACKOFF), Scope::Tenant, "alice asked 4 s ago");
        // alice asked 5 s ago: she no longer wants the host, mallory is alone again
        assert_eq!(ts.throttle_scope("mallory", t(8), BACKOFF), Scope::Fleet);
        // a waiting token wants the host too; the period runs from mallory's last fleet-wide report (t(8))
        ts.waits_for_permit("bob", t(200));
        assert_eq!(ts.throttle_scope("mallory", t(200), BACKOFF), Scope::Tenant, "within 240 s of t(8)");
        ts.asked("bob", t(246));
        assert_eq!(ts.throttle_scope("mallory", t(248), BACKOFF), Scope::Fleet, "a new period");
        assert_eq!(ts.throttle_scope("mallory", t(249), BACKOFF), Scope::Tenant);
        assert_eq!(ts.fleet_throttles.len(), 1, "one entry per token");
    }

    #[test]
    fn giving_a_reservation_back_before_its_instant_frees_its_permit_not_its_count() {
        let mut ts = Tenants::default();
        ts.issue("m1".into(), "mallory", t(10), Some(3));
        assert_eq!(ts.claim("m1", "mallory", Use::Cancel, t(1)).map(|d| d.permit), Ok(Some(3)), "its permit back");
        assert_eq!(ts.outstanding("mallory", t(1), BACKOFF), (1, Some(t(10))), "its slot still counts");
        assert_eq!(ts.claim("m1", "mallory", Use::Depart, t(2)), Err(Refusal::NotYours), "and cannot be used");
        assert_eq!(ts.claim("m1", "mallory", Use::Observe, t(2)), Err(Refusal::NotYours));
        assert_eq!(ts.outstanding("mallory", t(10), BACKOFF), (0, None), "until its instant");
        ts.issue("m2".into(), "mallory", t(20), None);
        assert!(ts.claim("m2", "mallory", Use::Observe, t(5)).is_ok(), "reported early: the same");
        assert_eq!(ts.outstanding("mallory", t(5), BACKOFF).0, 2);
        assert_eq!(ts.bound("alice", 4, t(5)), 1, "and another token sees it held");
    }

    #[test]
    fn the_next_free_permit_goes_to_the_waiting_token_holding_fewer_or_served_before() {
        let mut ts = Tenants::default();
        ts.issue("m1".into(), "mallory", t(0), Some(1));
        ts.departed("m1", "mallory", true); // the gateway's own fetch: in flight until its permit goes back
        assert_eq!(ts.claim("m1", "mallory", Use::Observe, t(0)), Err(Refusal::NotYours), "no use left in it");
        assert_eq!(ts.outstanding("mallory", t(0), BACKOFF).0, 0, "not a reservation");
        ts.waits_for_permit("alice", t(1));
        assert!(ts.waiting_before("mallory", t(1)) > 0, "alice holds none, mallory one");
        assert!(ts.waiting_before("alice", t(1)) == 0);
        ts.permit_back(1);
        let later = t(1).saturating_add(Duration::from_millis(500));
        assert!(ts.waiting_before("mallory", later) > 0, "as many (none) each: alice was served before mallory");
        ts.waits_for_permit("mallory", later);
        assert!(ts.waiting_before("alice", later) == 0, "alice's turn");
        ts.issue("a1".into(), "alice", t(1), Some(2));
        assert!(ts.waiting_before("mallory", later) == 0, "alice got hers: she waits no more");
        ts.departed("a1", "alice", true);
        ts.permit_back(2);
        ts.waits_for_permit("alice", later);
        assert!(ts.waiting_before("alice", later) > 0, "mallory waits and was served before alice: mallory's turn");
        ts.waits_for_permit("alice", t(2));
        assert!(ts.waiting_before("mallory", t(4)) == 0, "a wait not asked again for a second is stale");
        assert_eq!(ts.encode(), "", "fetches gone with their permits back are forgotten");
    }

    #[test]
    fn a_token_that_lets_permits_lapse_leaves_the_next_one_to_a_token_that_wants_the_host() {
        let mut ts = Tenants::default();
        // mallory reserves with a permit and never confirms; alice asked at 3 s and is between two requests
        ts.issue("m1".into(), "mallory", t(0), Some(1));
        ts.asked("alice", t(3));
        assert_eq!(ts.waiting_before("mallory", t(4)), 0, "within the grace its permit has not lapsed");
        assert_eq!(ts.lapsed("mallory", t(5)), 1, "5 s past its instant: lapsed");
        assert_eq!(ts.waiting_before("mallory", t(5)), 1, "alice wants the host: the next permit is hers");
        assert_eq!(ts.waiting_before("alice", t(5)), 0);
        assert_eq!(ts.claim("m1", "mallory", Use::Depart, t(5)), Err(Refusal::NotYours), "nor can it go any more");
        assert_eq!(ts.waiting_before("mallory", t(8)), 0, "alice asked 5 s ago: no one else wants the host");
        // a token that let as many lapse is not before it; one that let fewer is
        ts.issue("c1".into(), "carol", t(10), Some(2));
        ts.asked("carol", t(16));
        assert_eq!(ts.waiting_before("mallory", t(16)), 0, "carol let one lapse too");
        ts.issue("m2".into(), "mallory", t(20), Some(3));
        assert_eq!(ts.waiting_before("mallory", t(25)), 0, "carol asked 9 s ago");
        ts.asked("carol", t(25));
        assert_eq!(ts.waiting_before("mallory", t(25)), 1, "mallory let two lapse, carol one");
        // confirmed in time, a departure's permit never counts as lapsed; a lapsed one counts until it expires
        ts.issue("a1".into(), "alice", t(30), Some(4));
        ts.departed("a1", "alice", false);
        assert_eq!(ts.lapsed("alice", t(100)), 0);
        assert_eq!((ts.lapsed("mallory", t(299)), ts.lapsed("mallory", t(300))), (2, 1));
    }

    #[test]
    fn a_token_may_reserve_ahead_while_alone_and_one_at_a_time_while_another_wants_the_host() {
        let mut ts = Tenants::default();
        assert_eq!(ts.bound("alice", 4, t(0)), 4, "alone");
        ts.asked("alice", t(0));
        assert_eq!(ts.bound("alice", 4, t(1)), 4, "its own asks do not count");
        assert_eq!(ts.bound("bob", 4, t(1)), 1, "alice asked 1 s ago");
        assert_eq!(ts.bound("alice", 0, t(1)), 0, "never above the configured bound");
        ts.asked("bob", t(2));
        assert_eq!(ts.bound("alice", 4, t(6)), 1, "bob asked 4 s ago");
        assert_eq!(ts.bound("alice", 4, t(7)), 4, "bob asked 5 s ago: no longer");
        ts.issue("b1".into(), "bob", t(20), None);
        assert_eq!(ts.bound("alice", 4, t(10)), 1, "bob holds a reservation that counts");
        ts.departed("b1", "bob", false);
        assert_eq!(ts.bound("alice", 4, t(10)), 4, "bob's went");
        ts.asked("carol", t(100));
        ts.prune(t(105), BACKOFF);
        assert_eq!(ts.asks, vec![], "asks are kept for WANTS_FOR");
    }

    #[test]
    fn tenants_survive_their_saved_document_as_their_text_did() {
        let mut ts = two_tokens();
        ts.issue("f".into(), "token-1", t(12), Some(9));
        ts.departed("f", "token-1", true); // gone with its permit in flight: not kept
        let json = serde_json::to_string(&ts.saved()).unwrap();
        let back = Tenants::restore(serde_json::from_str(&json).unwrap());
        assert_eq!(back.encode(), ts.encode(), "what the line format kept, and no more");
        assert_eq!(back.issued.len(), 2);
        assert!(json.starts_with(r#"{"issued":[{"id":"a1","token":"token-1","departsNs":1764000010000000000,"#));
    }
}
