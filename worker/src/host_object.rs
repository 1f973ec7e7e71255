//! The Durable Object of one host — or, hosts grouped by site (`CRAWL_GROUP_BY=site`, [`crate::sites`]), of every
//! host of one site: the single source of time and truth for them, shared by every crawler and every Worker
//! instance. Each decision reads the clock once, decides and reserves synchronously on its [`HostDesk`],
//! persists the result synchronously (SQLite-backed storage: the write is committed before the answer leaves,
//! by the runtime's output gate) and only then answers. The one exception is the confirmation of a request the
//! object sends itself (`send`), written a while after its answer (see [`HostObject::save_after_answer`]). No
//! `RefCell` borrow lives across an `.await`. No alarms are used (so none is exported).
//!
//! The operators' rules that concern the object's hosts come from the rules object (`crate::rules_object`): asked
//! once, when the object loads its desk (which registers the object there, by its key), then pushed by it on every
//! change
//! ([`HostCall::Rules`]); never asked on a request's way. A change applies at once: callers held in the object wake
//! and ask again, and a departure waiting for its instant is confirmed again (a host now blocked refuses it).

use crate::api::{ApiError, Refusal};
use crate::config::GatewayConfig;
use crate::departure::{confirm_until_go, Confirmed, Timer};
use crate::desk::{bounded, given_up, host_blocked, robots_row_name, Asker, HostDesk, RobotsRule, TURN_RECHECK};
use crate::journal::{Asked, Journal, Purpose};
use crate::js;
use crate::protocol::{
    robots_entry, Answer, AskReply, AskRequest, Claim, DepartReply, DepartRequest, Departure, HostCall, HostReport,
    HostRules, HostRulesRequest, ObserveReply, ObserveRequest, Outgoing, RobotsReply, RobotsRequest, RuleEntry,
    RulesApplied, SendReply, SendRequest, StatsRequest,
};
use crate::sites::{object_key, parse_object_key};
use crate::tenants::Use;
use hostpace::{HostKey, Instant, Outcome, Refusal as Refused, Response as CoreResponse, RetryBudget, Turn};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{durable_object, web_sys, DurableObject, Env, Request, Response, State};

/// How long after a request the object sent was answered its confirmation is written, unless a write comes first
/// (see [`HostObject::save_after_answer`]).
const CONFIRMATION_WRITE_DELAY: Duration = Duration::from_secs(1);

/// How long after the object last sent to the host or heard from it a request it sends is taken to find a
/// connection open, in milliseconds. A request sent after a longer quiet (or the object's first) may have to open
/// one first and go out late (measured on loopback: 10–27 ms from the confirmation to the target's first byte,
/// against 1–5 ms on an open connection), which would bring the next departure that much closer to it at the
/// target: the next departure's spacing counts from when its answer came instead ([`HostDesk::sent`]).
const WARM_FOR_MS: f64 = 1000.0;

/// The host's object.
#[durable_object(fetch)]
pub struct HostObject {
    state: State,
    env: Env,
    /// The desk and its row in storage, shared with the write made a while after an answer.
    stored: Rc<Stored>,
    /// Callers held in the object (for a permit, robots.txt, a token's turn), woken by what may let them go.
    waiters: Waiters,
    /// Departures waiting for their instant, woken early by a change of the host's rules.
    rule_waiters: Waiters,
    /// The revision of the operators' rules the desk holds (0 before it is loaded).
    rules_revision: Cell<u64>,
    /// Each token's recent departures, per host (memory only: see [`crate::journal`]).
    journals: RefCell<HashMap<String, Journal>>,
    /// When the object last sent a request to each host or had an answer from it (epoch ms; none: never).
    last_exchange: RefCell<HashMap<String, f64>>,
}

/// The object's clock: epoch-based, so persisted instants survive a restart.
fn now() -> Instant {
    Instant::from_millis_f64(js::now_ms())
}

/// An answer without a target's response: `answer` as the body.
fn answered<R: Serialize>(answer: &Answer<R>) -> worker::Result<Response> {
    Response::ok(serde_json::to_string(answer)?)
}

/// A reply alone, as an operation's answer (no target's response).
fn reply<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    answered(&Answer::Ok(value)).map_err(|e| ApiError::internal(e.to_string()))
}

/// A caller's bound on waiting, in milliseconds, as a duration (none: no bound).
fn bound(max_wait_ms: Option<f64>) -> Option<Duration> {
    max_wait_ms.and_then(|ms| Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).ok())
}

/// Sleepers that something may wake before their time: each sleep puts its wake-up here, and takes it back when
/// its timer ends first.
#[derive(Default)]
struct Waiters {
    next: Cell<u64>,
    woken_by: RefCell<Vec<(u64, js_sys::Function)>>,
}

impl Waiters {
    /// Sleep `wait`, or less when [`Waiters::wake_all`] comes first; whether it did.
    async fn sleep(&self, wait: Duration) -> bool {
        let id = self.next.replace(self.next.get() + 1);
        let waiter = js::new_waiter();
        let promise: js_sys::Promise = js::get(&waiter, "promise").unchecked_into();
        if let Ok(resolve) = js::get(&waiter, "resolve").dyn_into::<js_sys::Function>() {
            self.woken_by.borrow_mut().push((id, resolve));
        }
        let woken = wasm_bindgen_futures::JsFuture::from(promise);
        let timer = worker::Delay::from(wait);
        futures_util::pin_mut!(woken, timer);
        let early = matches!(futures_util::future::select(woken, timer).await, futures_util::future::Either::Left(_));
        if !early {
            self.woken_by.borrow_mut().retain(|(i, _)| *i != id);
        }
        early
    }

    /// Wake every sleeper.
    fn wake_all(&self) {
        let waiters: Vec<(u64, js_sys::Function)> = self.woken_by.borrow_mut().drain(..).collect();
        for (_, resolve) in waiters {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }
}

/// A row of the object's table.
#[derive(Deserialize)]
struct Row {
    k: String,
    v: String,
}

/// The host's desk (loaded on first use) and the object's SQLite storage it is written to.
struct Stored {
    sql: worker::SqlStorage,
    desk: RefCell<Option<HostDesk>>,
    /// The text last written to storage (a change is written, an unchanged state is not).
    saved: RefCell<Option<String>>,
    /// The desk holds a change no write has stored yet (a confirmation for `send`).
    unsaved: Cell<bool>,
    /// A write is due a while after an answer (see [`HostObject::save_after_answer`]).
    write_pending: Cell<bool>,
}

impl Stored {
    fn sql(&self, query: &str, bindings: Vec<worker::SqlStorageValue>) -> Result<worker::SqlCursor, ApiError> {
        self.sql.exec(query, bindings).map_err(|e| ApiError::internal(format!("host object storage: {e}")))
    }

    /// Write `desk`'s state at `now`, unless it is the text last written.
    fn write(&self, desk: &HostDesk, now: Instant) -> Result<(), ApiError> {
        let text = desk.save(now);
        if self.saved.borrow().as_deref() == Some(text.as_str()) {
            self.unsaved.set(false);
            return Ok(()); // nothing changed (an observation that taught nothing): nothing to write
        }
        if self.saved.borrow().is_none() {
            // the first write of this object's life (later ones know the table is there)
            self.sql("CREATE TABLE IF NOT EXISTS hostpace (k TEXT PRIMARY KEY, v TEXT NOT NULL)", vec![])?;
        }
        self.sql("INSERT OR REPLACE INTO hostpace (k, v) VALUES ('host', ?)", vec![text.clone().into()])?;
        *self.saved.borrow_mut() = Some(text);
        self.unsaved.set(false);
        Ok(())
    }

    /// Write the loaded desk's state now if it holds a change no write has stored.
    fn write_unsaved(&self) -> Result<(), ApiError> {
        match &*self.desk.borrow() {
            Some(desk) if self.unsaved.get() => self.write(desk, now()),
            _ => Ok(()),
        }
    }
}

impl HostObject {
    fn config(&self) -> Result<GatewayConfig, ApiError> {
        crate::gateway::bindings::config(&self.env)
    }

    /// Load the object's desk on first use (a call about `host`): the operators' rules that concern its hosts are
    /// asked of the rules object (which registers the object by its key, and pushes it every later change of
    /// them), then the desk is read from storage (or fresh) and given them. Loaded, nothing is asked.
    async fn ready(&self, host: &str) -> Result<(), ApiError> {
        if self.stored.desk.borrow().is_some() {
            return Ok(());
        }
        let key = HostKey::parse(host).map_err(|e| ApiError::internal(e.to_string()))?;
        let object = object_key(self.config()?.policy.group_by, &key);
        let req = HostRulesRequest { host: object.to_string() };
        let rules = crate::gateway::host_client::call_rules(&self.env, req).await.map_err(|e| {
            // no rule known, no decision: a host an operator blocked must not be served from a guess
            ApiError::new(e.code, format!("the rules of {host} could not be asked of the rules object: {}", e.message))
        })?;
        self.install(&rules, Some(key)).map(|_| ())
    }

    /// Give the desk `rules` (the desk loaded from storage, or fresh, first if it is not yet, `select`ed on the
    /// host a call is about): the rules of the object's hosts (`rules.host`: the object's key) at a revision, the
    /// rules object's. A revision no newer than the desk's is not applied (a push that crossed a later one).
    fn install(&self, rules: &HostRules, select: Option<HostKey>) -> Result<RulesApplied, ApiError> {
        let mut slot = self.stored.desk.borrow_mut();
        let fresh = slot.is_none();
        let desk = match &mut *slot {
            Some(desk) if desk.object().as_str() == rules.host => desk,
            Some(desk) => {
                let object = desk.object();
                return Err(ApiError::internal(format!("object of {object} given the rules of {}", rules.host)));
            }
            // the configuration is needed only to load the desk, on first use
            empty => {
                let key = match select {
                    Some(key) => key,
                    None => parse_object_key(&rules.host).map_err(ApiError::internal)?,
                };
                let mut desk = self.load(key, &self.config()?)?;
                // jitter from the platform's randomness: hosts pushed back together come back apart
                desk.set_random(hostpace::Random::new((js_sys::Math::random() * 2f64.powi(53)) as u64));
                empty.insert(desk)
            }
        };
        if !fresh && rules.revision <= self.rules_revision.get() {
            return Ok(RulesApplied { applied: false, problems: Vec::new() });
        }
        let problems = desk.apply_rules(&rules.rules.iter().map(RuleEntry::rule).collect::<Vec<_>>());
        self.rules_revision.set(rules.revision);
        for problem in &problems {
            crate::gateway::logs::error(&ApiError::internal(format!(
                "a rule of {} is not applied: {problem}",
                rules.host
            )));
        }
        Ok(RulesApplied { applied: true, problems })
    }

    /// The operators' rules of the object's hosts changed (pushed by the rules object): applied at once, stored
    /// with the hosts' state when they have any, and every caller waiting in the object asks or confirms again.
    fn handle_rules(&self, rules: HostRules) -> Result<RulesApplied, ApiError> {
        let applied = self.install(&rules, None)?;
        if applied.applied {
            if let Some(desk) = self.stored.desk.borrow().as_ref().filter(|desk| desk.tracked()) {
                self.stored.write(desk, now())?;
            }
            self.wake_all();
            self.rule_waiters.wake_all();
        }
        Ok(applied)
    }

    /// Run `f` on the object's desk (loaded by [`HostObject::ready`]) at `now`, `host` selected ([`HostDesk::select`]:
    /// a host the object decides); when `save`, persist the desk before returning. Synchronous: the borrow ends
    /// before any await.
    fn with_desk<R>(
        &self,
        host: &str,
        save: bool,
        f: impl FnOnce(&mut HostDesk, Instant) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let mut slot = self.stored.desk.borrow_mut();
        let desk = match &mut *slot {
            Some(desk) if desk.key().as_str() == host => desk,
            Some(desk) => {
                let key = HostKey::parse(host).map_err(|e| ApiError::internal(e.to_string()))?;
                desk.select(&key).map_err(ApiError::internal)?;
                desk
            }
            None => return Err(ApiError::internal(format!("the desk of {host} is not loaded"))),
        };
        let now = now();
        let out = f(desk, now)?;
        if save {
            // a site's object past SITE_HOSTS_KEPT hosts forgets the idle ones, then writes what is left (which
            // also makes sure the table is there for the deletes)
            let forgotten = desk.forget_idle_hosts(now);
            self.stored.write(desk, now)?;
            self.forgotten(desk.object(), &forgotten)?;
        }
        Ok(out)
    }

    /// Hosts the object's desk forgot ([`HostDesk::forget_idle_hosts`]): their rules' rows, the departures shown
    /// and the last exchanges go with them.
    fn forgotten(&self, object: &HostKey, forgotten: &[HostKey]) -> Result<(), ApiError> {
        for host in forgotten {
            let name = robots_row_name(object, host);
            self.sql("DELETE FROM hostpace WHERE k = ?", vec![name.into()])?;
            self.journals.borrow_mut().remove(host.as_str());
            self.last_exchange.borrow_mut().remove(host.as_str());
        }
        Ok(())
    }

    /// Persist the host's desk now (nothing if it did not change).
    fn save(&self, host: &str) -> Result<(), ApiError> {
        self.with_desk(host, true, |_, _| Ok(()))
    }

    /// Persist the host's desk a while after a request the object sent was answered: what its confirmation
    /// changed (that it went, and how late). Written before the answer, it would hold the answer until stored
    /// (the runtime's output gate); written at once after, the next request would wait for it to be stored. Any
    /// write in between (the next decision's) stores it too, and this one then writes nothing; one is pending at
    /// a time. A restart before it forgets that the departure went and how late it left: it counts as its token's
    /// reservation (and as a token wanting the host, for the others' turns) until
    /// [`crate::tenants::RESERVATION_GRACE`] past its instant, and the next departure's spacing is kept from its
    /// reserved instant rather than from when it really left.
    fn save_after_answer(&self) {
        self.stored.unsaved.set(true);
        if self.stored.write_pending.replace(true) {
            return;
        }
        let stored = self.stored.clone();
        wasm_bindgen_futures::spawn_local(async move {
            worker::Delay::from(CONFIRMATION_WRITE_DELAY).await;
            stored.write_pending.set(false);
            if let Err(e) = stored.write_unsaved() {
                crate::gateway::logs::error(&e);
            }
        });
    }

    fn sql(&self, query: &str, bindings: Vec<worker::SqlStorageValue>) -> Result<worker::SqlCursor, ApiError> {
        self.stored.sql(query, bindings)
    }

    /// The desk of the object that decides `key`, `key` selected: read from storage, or fresh.
    fn load(&self, key: HostKey, config: &GatewayConfig) -> Result<HostDesk, ApiError> {
        // looking creates nothing: a host only gets storage when it first decides or learns something
        let tables: Vec<serde::de::IgnoredAny> = self
            .sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'hostpace'", vec![])?
            .to_array()
            .map_err(|e| ApiError::internal(format!("host object storage: {e}")))?;
        if tables.is_empty() {
            return HostDesk::new(config.policy.clone(), key).map_err(|e| ApiError::internal(e.to_string()));
        }
        // the state and every host's rules' row, in one read
        let mut rows: HashMap<String, String> = self
            .sql("SELECT k, v FROM hostpace", vec![])?
            .to_array::<Row>()
            .map_err(|e| ApiError::internal(format!("host object storage: {e}")))?
            .into_iter()
            .map(|r| (r.k, r.v))
            .collect();
        match rows.remove("host") {
            // a state that cannot be read is an error, never a fresh start (that would grant a burst)
            Some(saved) => {
                let desk = HostDesk::restore_rows(&saved, |name| rows.get(name).cloned(), config.policy.clone(), key)
                    .map_err(|e| ApiError::new(Refusal::StateUnreadable, e))?;
                // rules stored by an earlier version are stored again in this one's format, once (the state is,
                // at its next write)
                for (name, current) in desk.robots_rows() {
                    if rows.get(&name) != Some(&current) {
                        self.sql(
                            "INSERT OR REPLACE INTO hostpace (k, v) VALUES (?, ?)",
                            vec![name.into(), current.into()],
                        )?;
                    }
                }
                Ok(desk)
            }
            None => HostDesk::new(config.policy.clone(), key).map_err(|e| ApiError::internal(e.to_string())),
        }
    }

    /// `ask`: the answer, or — with `send`, once a departure is reserved — the request sent at it
    /// ([`HostObject::send_at`]), so a request that waits its turn takes one call.
    async fn handle_ask(&self, req: AskRequest) -> Result<Response, ApiError> {
        // the caller's bound counts from now, for the departure's confirmation too
        let deadline = bound(req.max_wait_ms).map(|m| now().saturating_add(m));
        match (self.ask(&req).await?, &req.send) {
            (AskReply::Go(dep), Some(request)) if dep.reserved => {
                let claim = dep.claim(req.asker.as_ref());
                let at = (dep.departs_ms, deadline);
                self.send_at(&req.host, claim.as_ref(), None, at, request, Some(dep.clone())).await
            }
            (ask, _) => reply(&ask),
        }
    }

    async fn ask(&self, req: &AskRequest) -> Result<AskReply, ApiError> {
        let config = self.config()?;
        let max_wait = bound(req.max_wait_ms);
        let robots = req.robots.then(|| RobotsRule {
            timing: config.robots_timing(),
            obey: config.obey_robots,
            user_agent: &config.user_agent,
            url: &req.url,
        });
        let deadline = max_wait.map(|m| now().saturating_add(m));
        let asked_ms = js::now_ms();
        loop {
            // the caller's bound counts the time spent holding here
            let max_wait = deadline.map(|d| d.saturating_duration_since(now()));
            let (ask, issued) = self.with_desk(&req.host, true, |desk, now| {
                let (ask, issued) = match &req.asker {
                    Some(a) => {
                        let asker = Asker { token: &a.token, max_reservations: a.max_reservations, waits: a.waits };
                        desk.ask_as(asker, js::random_id(), max_wait, robots, now)?
                    }
                    None => (desk.ask(max_wait, robots, now).map_err(|e| ApiError::internal(e.to_string()))?, None),
                };
                Ok(((ask, now), issued))
            })?;
            let asked = |wait: Duration| Asked {
                at_ms: asked_ms,
                departs_ms: ask.1.as_millis_f64() + wait.as_secs_f64() * 1e3,
            };
            match ask {
                (Turn::Go(d), _) if !d.reserved => {
                    // every concurrency permit is held: wait for a release (woken by it) or the first lease's end,
                    // then ask again
                    self.hold(d.wait.min(TURN_RECHECK)).await;
                }
                (Turn::Go(d), _) => {
                    let (layer, asked) = (d.layer.as_str(), asked(d.wait));
                    let mut journal = self.journal(&req.host);
                    if let Some(j) = &req.journal {
                        journal.reserved(&j.token, &j.id, Purpose::Robots, layer, asked);
                    } else if let (Some(a), Some(id)) = (&req.asker, &issued) {
                        journal.reserved(&a.token, id, Purpose::Request, layer, asked);
                    }
                    drop(journal);
                    return Ok(AskReply::Go(Departure { departure_id: issued, ..Departure::from(&d) }));
                }
                (Turn::FetchRobots { decision: d, fetch, .. }, _) => {
                    if let Some(a) = &req.asker {
                        let key = robots_entry(fetch);
                        self.journal(&req.host).reserved(
                            &a.token,
                            &key,
                            Purpose::Robots,
                            d.layer.as_str(),
                            asked(d.wait),
                        );
                    }
                    return Ok(AskReply::Robots(Departure { robots_fetch: Some(fetch), ..Departure::from(&d) }));
                }
                (Turn::Refuse(Refused::Disallowed(rule)), _) => {
                    return Ok(AskReply::Disallowed { rule: bounded(rule.to_string()) })
                }
                (Turn::Refuse(Refused::GivenUp { until }), now) => return Err(given_up(&req.host, until, now)),
                (Turn::Refuse(Refused::Blocked { reason }), _) => return Err(host_blocked(&req.host, &reason)),
                (Turn::Refuse(Refused::RobotsUnreachable { retry_at }), now) => {
                    let retry_after_ms = retry_at.saturating_duration_since(now).as_secs_f64() * 1000.0;
                    return Ok(AskReply::Unavailable { retry_after_ms });
                }
                (Turn::Later { wait, why }, _) => {
                    return Ok(AskReply::Later { wait_ms: wait.as_secs_f64() * 1000.0, layer: why.as_str().to_owned() })
                }
                (Turn::Hold { until }, now) => {
                    // another caller is fetching robots.txt, or one of the token's own departures is due: wait
                    // for the report or the departure (woken by it), then ask again
                    let left = max_wait.unwrap_or(TURN_RECHECK);
                    let wait = until.saturating_duration_since(now).min(TURN_RECHECK).min(left);
                    self.hold(wait).await;
                }
            }
        }
    }

    /// The object sent a request to `host` or had an answer from it at `at_ms`: when it last did before (0: never).
    fn exchanged(&self, host: &str, at_ms: f64) -> f64 {
        let mut last = self.last_exchange.borrow_mut();
        match last.get_mut(host) {
            Some(t) => std::mem::replace(t, at_ms),
            None => {
                last.insert(host.to_owned(), at_ms);
                0.0
            }
        }
    }

    /// `host`'s journal (each host of the object has its own).
    fn journal(&self, host: &str) -> RefMut<'_, Journal> {
        let mut journals = self.journals.borrow_mut();
        if !journals.contains_key(host) {
            journals.insert(host.to_owned(), Journal::default());
        }
        RefMut::map(journals, |j| j.get_mut(host).expect("inserted above"))
    }

    async fn hold(&self, wait: Duration) {
        self.waiters.sleep(wait).await;
    }

    fn wake_all(&self) {
        self.waiters.wake_all();
    }

    /// Confirm a departure: `claim`'s (a token's own, taken once and confirmed for the instant it was reserved
    /// for), else the one reserved for `departs`. While the core says "not yet" (the instant is still ahead, or a
    /// departure before this one left late), wait here and confirm again, so the caller needs one round trip.
    /// `sends`: the object sends the request itself right after ([`HostObject::handle_send`]): the departure
    /// ends going (one whose record went, the oldest being forgotten first, still goes at `departs`), each
    /// confirmation comes only once every write before it is stored, and what it changes is not written (the
    /// caller has it written after the answer, [`HostObject::save_after_answer`]). A departure that goes is
    /// stamped in the journal as `entry` (the claim's own, or robots.txt fetched for a token). One held behind a
    /// cooldown is confirmed at its new instant, written at once (the wait for it comes before any send); one
    /// that may not go by `deadline`, or at all while the host is given up on, is refused ([`HostDesk::depart`]:
    /// nothing sent, the claim given back and dropped from the journal).
    async fn confirm(
        &self,
        host: &str,
        claim: Option<&Claim>,
        entry: Option<&Claim>,
        departs: Instant,
        sends: bool,
        deadline: Option<Instant>,
    ) -> Result<Confirmed, ApiError> {
        let save = !sends;
        let departs = match claim {
            Some(c) => match self.with_desk(host, save, |desk, now| desk.claim(&c.token, &c.id, Use::Depart, now)) {
                Ok((departs, _)) => departs,
                Err(_) if sends => departs,
                Err(e) => return Err(e),
            },
            None => departs,
        };
        // a departure held behind a cooldown the host began after it was reserved is confirmed at its new instant
        let reserved = Cell::new(departs);
        let issued = claim.map(|c| (c.token.as_str(), c.id.as_str()));
        let confirm = || async {
            if sends {
                self.stored().await?;
            }
            let departure =
                self.with_desk(host, save, |desk, now| desk.depart(reserved.get(), deadline, issued, now))?;
            if let hostpace::Departure::Held { departs, .. } = departure {
                reserved.set(departs);
                // its new instant (and its token's record of it) survives a restart
                self.save(host)?;
            }
            Ok(departure.wait().as_secs_f64() * 1000.0)
        };
        // a change of the host's rules wakes the wait: a host now blocked refuses the departure at once
        let pause = |wait: Duration| self.rule_waiters.sleep(wait);
        let confirmed = match confirm_until_go(100, Timer::PastTheWait, confirm, pause).await {
            Ok(confirmed) => confirmed,
            Err(e) => {
                if matches!(e.code, Refusal::DepartureHeld | Refusal::HostGivenUp | Refusal::HostBlocked) {
                    self.save(host)?;
                    if let Some(c) = entry {
                        self.journal(host).cancelled(&c.token, &c.id);
                    }
                    // a reservation fewer: a caller held at its token's bound may go
                    self.wake_all();
                }
                return Err(e);
            }
        };
        if let (Confirmed::Go { .. }, Some(e)) = (confirmed, entry) {
            self.journal(host).departed(&e.token, &e.id, js::now_ms());
        }
        if let (Confirmed::Go { .. }, Some(c)) = (confirmed, claim) {
            self.with_desk(host, save, |desk, _| {
                desk.departed(&c.token, &c.id, sends);
                Ok(())
            })?;
            // a reservation fewer: a caller held at its token's bound may go
            self.wake_all();
        }
        Ok(confirmed)
    }

    /// Once every write made so far is stored. The runtime holds a Durable Object's outgoing requests until its
    /// pending writes are stored (its output gate); a request sent after this, with nothing written in between,
    /// leaves at once.
    async fn stored(&self) -> Result<(), ApiError> {
        self.state.storage().sync().await.map_err(|e| ApiError::internal(format!("host object storage: {e}")))
    }

    /// `/v1/depart`: a token confirms its own departure right before sending it.
    async fn handle_depart(&self, req: DepartRequest) -> Result<DepartReply, ApiError> {
        let claim = Some(&req.departure);
        let deadline = now().saturating_add(self.config()?.max_wait);
        let wait_ms = match self.confirm(&req.host, claim, claim, now(), false, Some(deadline)).await? {
            Confirmed::Go { .. } => 0.0,
            Confirmed::NotYet { waited_ms } => waited_ms,
        };
        Ok(DepartReply { wait_ms })
    }

    /// Send a request of the gateway's at its departure: confirm, and send in the same step. Nothing runs between
    /// the two, and nothing written is waiting to be stored (the runtime would hold the request until it is, for
    /// as long as storing takes, and two departures held by one write would leave together): the confirmation
    /// comes once earlier writes are stored, and what it changes is written a while after the answer has come
    /// ([`HostObject::save_after_answer`]; the reservation itself was written when it was made). The answer is
    /// the target's response with the [`SendReply`] in a header, or a reply alone.
    async fn handle_send(&self, req: SendRequest) -> Result<Response, ApiError> {
        let at = (req.departs_ms, req.deadline_ms.map(Instant::from_millis_f64));
        self.send_at(&req.host, req.departure.as_ref(), req.journal.as_ref(), at, &req.request, None).await
    }

    /// Send `request` at the departure reserved for `at`'s epoch milliseconds (`claim`'s, when issued to a
    /// token), by `at`'s deadline when it has one: wait for it, confirm it and send, as [`HostObject::handle_send`]
    /// says. `departure`, when the same call reserved it, goes back in the reply. The journal entry stamped is
    /// `journal`'s, else the claim's, and gets the answer's status.
    async fn send_at(
        &self,
        host: &str,
        claim: Option<&Claim>,
        journal: Option<&Claim>,
        (departs_ms, deadline): (f64, Option<Instant>),
        request: &Outgoing,
        departure: Option<Departure>,
    ) -> Result<Response, ApiError> {
        let departs = Instant::from_millis_f64(departs_ms);
        let entry = journal.or(claim);
        let waited_ms = match self.confirm(host, claim, entry, departs, true, deadline).await {
            Ok(Confirmed::Go { waited_ms }) => waited_ms,
            Ok(Confirmed::NotYet { waited_ms }) => {
                self.save(host)?;
                return reply(&SendReply::NotYet { departure, waited_ms });
            }
            Err(e) => {
                // what was changed before the failure is kept
                self.save(host)?;
                return Err(e);
            }
        };
        let sent = js::now_ms();
        // after a quiet, on a connection the runtime may have to open first, it may go out well after its confirmation
        let cold = sent - self.exchanged(host, sent) > WARM_FOR_MS;
        let fetched =
            JsFuture::from(js::upstream_fetch(&request.url, &js::to_array(&request.headers), request.timeout_ms)).await;
        let answered = js::now_ms();
        self.exchanged(host, answered);
        let slowed = self.with_desk(host, false, |desk, now| {
            if cold {
                // it went out by the time its answer (or its failure) came: the next departure is spaced from then
                desk.sent(Instant::from_millis_f64(answered), now);
            }
            Ok(desk.slowed())
        })?;
        self.save_after_answer();
        if let Some(e) = entry {
            let status = fetched.as_ref().map_or(0, |r| r.unchecked_ref::<web_sys::Response>().status());
            self.journal(host).answered(&e.token, &e.id, status);
        }
        let no_answer = |e: &JsValue, what: &str| SendReply::NoAnswer {
            departure: departure.clone(),
            waited_ms,
            timed_out: js::get(e, "name").as_string().as_deref() == Some("TimeoutError"),
            message: format!("{what}{}", js::get(e, "message").as_string().unwrap_or_else(|| "fetch failed".into())),
        };
        let upstream: web_sys::Response = match fetched {
            Ok(response) => response.unchecked_into(),
            Err(e) => return reply(&no_answer(&e, "")),
        };
        let sent = SendReply::Sent { departure: departure.clone(), waited_ms, latency_ms: answered - sent, slowed };
        let text = serde_json::to_string(&sent).map_err(|e| ApiError::internal(e.to_string()))?;
        match js::sent_reply(&upstream, &text) {
            Ok(response) => Ok(Response::from(response)),
            Err(e) => {
                js::cancel_body(&upstream);
                reply(&no_answer(&e, "the answer cannot be passed on: "))
            }
        }
    }

    fn handle_observe(&self, req: ObserveRequest) -> Result<ObserveReply, ApiError> {
        let config = self.config()?;
        let headers: Vec<(&str, &str)> = req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let reply = self.with_desk(&req.host, true, |desk, now| {
            let internal = |e: hostpace::Error| ApiError::internal(e.to_string());
            let status = match (req.status, req.timeout) {
                (_, true) => None,
                (Some(s), false) => Some(s),
                (None, false) => {
                    let released = match &req.departure {
                        Some(c) => desk.cancel(&c.token, &c.id, now)?,
                        None => req.permit_id.is_some_and(|p| desk.release(p)),
                    };
                    return Ok(ObserveReply { host: req.host.clone(), released, ..ObserveReply::default() });
                }
            };
            let outcome = match status {
                None => Outcome::Timeout,
                Some(status) => Outcome::Response(CoreResponse {
                    status,
                    headers: &headers,
                    latency: req.latency_ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()),
                    wall_now_ms: Some(js::now_ms() as u64),
                }),
            };
            let (observation, released) = match &req.departure {
                Some(c) => desk.observe_as(&c.token, &c.id, &outcome, now)?,
                None => desk.observe(&outcome, req.permit_id, now).map_err(internal)?,
            };
            let verdict = match (req.attempt, status) {
                (Some(attempt), Some(status)) => Some(RetryBudget::verdict(config.policy.max_retries, attempt, status)),
                _ => None,
            };
            Ok(ObserveReply::of(&req.host, &observation, verdict, released))
        });
        if let (Ok(_), Some(c)) = (&reply, &req.departure) {
            let mut journal = self.journal(&req.host);
            match (req.status, req.timeout) {
                (_, true) => journal.answered(&c.token, &c.id, 0),
                (Some(status), false) => journal.answered(&c.token, &c.id, status),
                (None, false) => journal.cancelled(&c.token, &c.id),
            }
        }
        // a released permit (or a cooldown that moved) may let a holding caller go
        self.wake_all();
        reply
    }

    fn handle_robots(&self, req: RobotsRequest) -> Result<RobotsReply, ApiError> {
        let headers: Vec<(&str, &str)> = req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let reply = self.with_desk(&req.host, true, |desk, now| {
            let response = req.status.map(|status| CoreResponse {
                status,
                headers: &headers,
                latency: None,
                wall_now_ms: Some(js::now_ms() as u64),
            });
            let outcome = desk
                .robots(req.fetch, response.as_ref(), &req.body, &req.user_agent, now)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            let copied = outcome.is_some() && req.status.is_some_and(|s| (200..300).contains(&s));
            Ok((
                RobotsReply { outcome, next_due_ms: desk.robots_due().as_millis_f64() },
                copied.then(|| desk.robots_row().map(|row| (desk.robots_row_name(), row))).flatten(),
            ))
        });
        self.wake_all();
        let (reply, row) = reply?;
        if let Some((name, row)) = row {
            // the rules, stored beside the state (written only when a new copy arrives; a row per host), so a
            // restarted object does not fetch robots.txt again before its time; the row names its copy, so a row
            // that failed to be written is never taken for the state's copy
            self.sql("INSERT OR REPLACE INTO hostpace (k, v) VALUES (?, ?)", vec![name.into(), row.into()])?;
        }
        Ok(reply)
    }

    /// The host's report, with the asking token's departures.
    fn handle_stats(&self, req: StatsRequest) -> Result<HostReport, ApiError> {
        let report = self.with_desk(&req.host, false, |desk, now| Ok(desk.report(now)))?;
        let report = report.ok_or_else(|| ApiError::new(Refusal::UnknownHost, "no state for this host"))?;
        Ok(HostReport { departures: self.journal(&req.host).departures(&req.token), ..report })
    }
}

impl DurableObject for HostObject {
    fn new(state: State, env: Env) -> Self {
        let stored = Stored {
            sql: state.storage().sql(),
            desk: RefCell::new(None),
            saved: RefCell::new(None),
            unsaved: Cell::new(false),
            write_pending: Cell::new(false),
        };
        HostObject {
            state,
            env,
            stored: Rc::new(stored),
            waiters: Waiters::default(),
            rule_waiters: Waiters::default(),
            rules_revision: Cell::new(0),
            journals: RefCell::new(HashMap::new()),
            last_exchange: RefCell::new(HashMap::new()),
        }
    }

    /// A [`HostCall`], answered with the target's response (an `ask` or `send` that sent) or an [`Answer`].
    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let call: HostCall = match serde_json::from_str(&req.text().await?) {
            Ok(call) => call,
            Err(e) => {
                let e = ApiError::internal(format!("bad request to the host object: {e}"));
                return answered(&Answer::<()>::Refused(e));
            }
        };
        // pushed rules load the desk themselves; any other call needs it loaded (with its rules) first
        let ready = match &call {
            HostCall::Rules(_) => Ok(()),
            call => self.ready(call.host()).await,
        };
        if let Err(e) = ready {
            return answered(&Answer::<()>::Refused(e));
        }
        let answer = match call {
            HostCall::Rules(rules) => self.handle_rules(rules).and_then(|r| reply(&r)),
            HostCall::Ask(req) => self.handle_ask(req).await,
            HostCall::Depart(req) => self.handle_depart(req).await.and_then(|r| reply(&r)),
            HostCall::Send(req) => self.handle_send(req).await,
            HostCall::Observe(req) => self.handle_observe(req).and_then(|r| reply(&r)),
            HostCall::Robots(req) => self.handle_robots(req).and_then(|r| reply(&r)),
            HostCall::Stats(req) => self.handle_stats(req).and_then(|r| reply(&r)),
        };
        match answer {
            Ok(response) => Ok(response),
            Err(e) => answered(&Answer::<()>::Refused(e)),
        }
    }
}
