//! The Durable Object that holds every operator's rule of the gateway: one object (named
//! [`crate::protocol::RULES_OBJECT`] in the `RULES` namespace), the authority on the rules. Its SQLite storage holds
//! each rule (with who set it and when), the rules' revision, and the keys of the host objects that have loaded:
//! each host object asks it, when it loads its desk, for the rules that concern its hosts ([`RulesCall::Host`],
//! by the object's key: a host's, or a site's when hosts are grouped by site), which registers the object. A change ([`RulesCall::Set`], [`RulesCall::Remove`]) is checked by the core (the
//! [`Rulebook`]), stored, and pushed — awaited — to every registered host object it concerns, each given every rule
//! that concerns its host at the new revision; the answer says how many applied it. The stored part of a change is
//! synchronous (one atomic write); only the pushes await.

use crate::api::{ApiError, Refusal};
use crate::gateway::host_client::push_rules;
use crate::gateway::logs;
use crate::js;
use crate::protocol::{
    Answer, HostRules, HostRulesRequest, RemoveRuleRequest, RuleChange, RuleEntry, RuleList, RulesCall, SetRuleRequest,
};
use crate::rulebook::{key_text, Rulebook};
use crate::sites::{is_object_key, parse_object_key};
use futures_util::future::join_all;
use hostpace::HostKey;
use serde::Deserialize;
use std::cell::RefCell;
use worker::{durable_object, DurableObject, Env, Request, Response, SqlStorageValue, State};

/// Host objects a change is pushed to at once.
const PUSH_AT_ONCE: usize = 16;

/// The rules object.
#[durable_object(fetch)]
pub struct RulesObject {
    state: State,
    env: Env,
    /// The rules, read from storage on first use.
    book: RefCell<Option<Rulebook>>,
    /// Stored rules the configuration refuses (listed with the rules).
    problems: RefCell<Vec<String>>,
}

#[derive(Deserialize)]
struct Text {
    v: String,
}

#[derive(Deserialize)]
struct Host {
    host: String,
}

fn fail(e: worker::Error) -> ApiError {
    ApiError::internal(format!("rules object storage: {e}"))
}

impl RulesObject {
    fn sql(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Result<worker::SqlCursor, ApiError> {
        self.state.storage().sql().exec(query, bindings).map_err(fail)
    }

    /// The rules, read from storage on first use (the tables made then).
    fn with_book<R>(&self, f: impl FnOnce(&mut Rulebook) -> Result<R, ApiError>) -> Result<R, ApiError> {
        let mut slot = self.book.borrow_mut();
        let book = match &mut *slot {
            Some(book) => book,
            empty => empty.insert(self.load()?),
        };
        f(book)
    }

    fn load(&self) -> Result<Rulebook, ApiError> {
        self.sql("CREATE TABLE IF NOT EXISTS rules (pattern TEXT PRIMARY KEY, entry TEXT NOT NULL)", vec![])?;
        self.sql("CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY)", vec![])?;
        self.sql("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)", vec![])?;
        let meta: Vec<Text> = self.sql("SELECT v FROM meta WHERE k = 'revision'", vec![])?.to_array().map_err(fail)?;
        let revision = match meta.first() {
            Some(t) => t.v.parse().map_err(|_| ApiError::internal(format!("stored revision {:?}", t.v)))?,
            None => 0,
        };
        let rows: Vec<Text> =
            self.sql("SELECT entry AS v FROM rules ORDER BY pattern", vec![])?.to_array().map_err(fail)?;
        let mut entries = Vec::with_capacity(rows.len());
        for row in rows {
            let entry: RuleEntry = serde_json::from_str(&row.v)
                .map_err(|e| ApiError::internal(format!("a stored rule is unreadable: {e}")))?;
            entries.push(entry);
        }
        let policy = crate::gateway::bindings::config(&self.env)?.policy;
        let (book, problems) =
            Rulebook::restore(policy, revision, entries).map_err(|e| ApiError::internal(e.to_string()))?;
        for problem in &problems {
            logs::error(&ApiError::internal(problem.clone()));
        }
        *self.problems.borrow_mut() = problems;
        Ok(book)
    }

    /// Store `pattern`'s rule (`None`: removed) and the rules' `revision`, in one write.
    fn store(&self, pattern: &str, entry: Option<&RuleEntry>, revision: u64) -> Result<(), ApiError> {
        match entry {
            Some(entry) => {
                let text = serde_json::to_string(entry).map_err(|e| ApiError::internal(e.to_string()))?;
                self.sql(
                    "INSERT OR REPLACE INTO rules (pattern, entry) VALUES (?, ?)",
                    vec![pattern.into(), text.into()],
                )?;
            }
            None => {
                self.sql("DELETE FROM rules WHERE pattern = ?", vec![pattern.into()])?;
            }
        }
        let revision = revision.to_string();
        self.sql("INSERT OR REPLACE INTO meta (k, v) VALUES ('revision', ?)", vec![revision.into()])?;
        Ok(())
    }

    /// The registered objects the rule of `pattern` (as the core writes it) concerns in `book`: hosts' objects
    /// whose host it names, sites' objects (hosts grouped by site) with a host it names or the site itself. An
    /// object a change of `CRAWL_GROUP_BY` left behind is not among them (no call reaches it any more).
    fn named_hosts(&self, book: &Rulebook, pattern: &str) -> Result<Vec<HostKey>, ApiError> {
        let q = "SELECT host FROM hosts WHERE instr(host, ?) > 0 OR (substr(host, 1, 2) = '*.' AND instr(?, substr(host, 3)) > 0)";
        let text = key_text(pattern);
        let rows: Vec<Host> = self.sql(q, vec![text.into(), text.into()])?.to_array().map_err(fail)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| parse_object_key(&r.host).ok())
            .filter(|key| is_object_key(book.policy(), key) && book.names(pattern, key))
            .collect())
    }

    /// Set a rule, store it, and push it to the host objects it names.
    async fn set(&self, req: SetRuleRequest) -> Result<RuleChange, ApiError> {
        let (entry, previous, revision, pushes) = self.with_book(|book| {
            let before = book.revision();
            let (entry, previous) = book.set(&req.pattern, &req.body, &req.by, js::now_ms())?;
            if let Err(e) = self.store(&entry.pattern, Some(&entry), book.revision()) {
                book.undo(&entry.pattern, previous, before);
                return Err(e);
            }
            let pushes = self.named_hosts(book, &entry.pattern)?.iter().map(|key| book.for_host(key)).collect();
            Ok((entry, previous, book.revision(), pushes))
        })?;
        let (hosts, unreached) = self.push(pushes).await;
        Ok(RuleChange { revision, rule: Some(entry), previous, hosts, unreached })
    }

    /// Remove a rule, store that, and push it to the host objects it named.
    async fn remove(&self, req: RemoveRuleRequest) -> Result<RuleChange, ApiError> {
        let (previous, revision, pushes) = self.with_book(|book| {
            let before = book.revision();
            // the hosts it names, while it is there to name them
            let named = match book.get(&req.pattern)? {
                Some(entry) => self.named_hosts(book, &entry.pattern)?,
                None => Vec::new(),
            };
            let removed = book.remove(&req.pattern)?;
            if let Err(e) = self.store(&removed.pattern, None, book.revision()) {
                book.undo(&removed.pattern.clone(), Some(removed), before);
                return Err(e);
            }
            let pushes = named.iter().map(|key| book.for_host(key)).collect();
            Ok((removed, book.revision(), pushes))
        })?;
        let (hosts, unreached) = self.push(pushes).await;
        Ok(RuleChange { revision, rule: None, previous: Some(previous), hosts, unreached })
    }

    /// Push each host's rules to its object, [`PUSH_AT_ONCE`] at a time: how many applied them (or had a later
    /// revision), and those that could not be reached, with why.
    async fn push(&self, pushes: Vec<HostRules>) -> (u32, Vec<String>) {
        let mut reached = 0;
        let mut unreached = Vec::new();
        for some in pushes.chunks(PUSH_AT_ONCE) {
            let sent = some
                .iter()
                .map(|rules| async move { (rules.host.clone(), push_rules(&self.env, rules.clone()).await) });
            for (host, result) in join_all(sent).await {
                match result {
                    Ok(_) => reached += 1,
                    Err(e) => {
                        let e =
                            ApiError::new(e.code, format!("the rules of {host} could not be pushed: {}", e.message));
                        logs::error(&e);
                        unreached.push(e.message);
                    }
                }
            }
        }
        (reached, unreached)
    }

    /// The rules that concern the object named `req.host` (a host's key, or a site's), the object registered for
    /// the pushes of every later change.
    fn host(&self, req: &HostRulesRequest) -> Result<HostRules, ApiError> {
        let key = parse_object_key(&req.host).map_err(|e| ApiError::new(Refusal::InvalidHost, e))?;
        self.with_book(|book| {
            self.sql("INSERT OR IGNORE INTO hosts (host) VALUES (?)", vec![key.as_str().into()])?;
            Ok(book.for_host(&key))
        })
    }

    fn list(&self) -> Result<RuleList, ApiError> {
        let (revision, rules) = self.with_book(|book| Ok((book.revision(), book.list())))?;
        Ok(RuleList { revision, rules, problems: self.problems.borrow().clone() })
    }
}

impl DurableObject for RulesObject {
    fn new(state: State, env: Env) -> Self {
        RulesObject { state, env, book: RefCell::new(None), problems: RefCell::new(Vec::new()) }
    }

    /// A [`RulesCall`], answered with an [`Answer`].
    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let call: RulesCall = match serde_json::from_str(&req.text().await?) {
            Ok(call) => call,
            Err(e) => {
                let e = ApiError::internal(format!("bad request to the rules object: {e}"));
                return Response::ok(serde_json::to_string(&Answer::<()>::Refused(e))?);
            }
        };
        let text = match call {
            RulesCall::Set(req) => serde_json::to_string(&Answer::from(self.set(req).await)),
            RulesCall::Remove(req) => serde_json::to_string(&Answer::from(self.remove(req).await)),
            RulesCall::List(_) => serde_json::to_string(&Answer::from(self.list())),
            RulesCall::Host(req) => serde_json::to_string(&Answer::from(self.host(&req))),
        }?;
        Response::ok(text)
    }
}
