//! The Durable Object that bounds how many hosts one token may create: one object per token (named by
//! [`crate::auth::token_id`]), holding the set of hosts it admitted in SQLite. A host already admitted is always
//! admitted again; a new one only while the token is under its bound. It also answers which hosts a token has
//! used (what the token may read reports of), and lists them. Synchronous storage: no await.

use crate::api::ApiError;
use crate::protocol::Answer;
use serde::{Deserialize, Serialize};
use worker::{durable_object, DurableObject, Env, Request, Response, SqlStorageValue, State};

/// Worker → ledger: one call (the body of the ledger's one route, as JSON), answered with an [`Answer`].
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", content = "with", rename_all = "camelCase")]
pub enum LedgerCall {
    /// Admit a host (or ask whether the token has used it): an [`AdmitReply`].
    Admit(AdmitRequest),
    /// The first `limit` hosts the token used: a [`ListReply`].
    List {
        /// The most hosts listed.
        limit: u32,
    },
}

/// Worker → ledger: admit `host` for this token, under a bound of `max` hosts.
#[derive(Serialize, Deserialize)]
pub struct AdmitRequest {
    /// The host key.
    pub host: String,
    /// The bound (`CRAWL_MAX_HOSTS_PER_TOKEN`).
    pub max: u32,
    /// False to only ask whether the token has used `host` (nothing is admitted).
    pub create: bool,
}

/// Ledger → Worker.
#[derive(Serialize, Deserialize)]
pub struct AdmitReply {
    /// Whether the host may be used by this token.
    pub admitted: bool,
    /// Hosts this token has created.
    pub count: u32,
}

/// Ledger → Worker: the hosts, and how many the token has used in all.
#[derive(Serialize, Deserialize)]
pub struct ListReply {
    /// Host keys, at most the asked limit.
    pub hosts: Vec<String>,
    /// Hosts this token has used.
    pub total: u32,
}

#[derive(Deserialize)]
struct Count {
    n: f64,
}

#[derive(Deserialize)]
struct Host {
    host: String,
}

/// A token's ledger of hosts.
#[durable_object(fetch)]
pub struct TokenLedger {
    state: State,
}

fn fail(e: worker::Error) -> ApiError {
    ApiError::internal(format!("token ledger storage: {e}"))
}

/// The number a `SELECT count(*) AS n` query gives.
fn count(sql: &worker::SqlStorage, q: &str, b: Vec<SqlStorageValue>) -> Result<u32, ApiError> {
    let rows: Vec<Count> = sql.exec(q, b).map_err(fail)?.to_array().map_err(fail)?;
    Ok(rows.first().map_or(0, |r| r.n as u32))
}

impl TokenLedger {
    /// The ledger's table, made on first use.
    fn sql(&self) -> Result<worker::SqlStorage, ApiError> {
        let sql = self.state.storage().sql();
        sql.exec("CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY)", None).map_err(fail)?;
        Ok(sql)
    }

    fn admit(&self, req: &AdmitRequest) -> Result<AdmitReply, ApiError> {
        let sql = self.sql()?;
        if count(&sql, "SELECT count(*) AS n FROM hosts WHERE host = ?", vec![req.host.as_str().into()])? > 0 {
            let n = count(&sql, "SELECT count(*) AS n FROM hosts", vec![])?;
            return Ok(AdmitReply { admitted: true, count: n });
        }
        let n = count(&sql, "SELECT count(*) AS n FROM hosts", vec![])?;
        if !req.create || n >= req.max {
            return Ok(AdmitReply { admitted: false, count: n });
        }
        sql.exec("INSERT INTO hosts (host) VALUES (?)", vec![req.host.as_str().into()]).map_err(fail)?;
        Ok(AdmitReply { admitted: true, count: n + 1 })
    }

    /// The first `limit` hosts the token used, in that order.
    fn list(&self, limit: u32) -> Result<ListReply, ApiError> {
        let sql = self.sql()?;
        let q = "SELECT host FROM hosts ORDER BY rowid LIMIT ?";
        let rows: Vec<Host> = sql.exec(q, vec![f64::from(limit).into()]).map_err(fail)?.to_array().map_err(fail)?;
        let total = count(&sql, "SELECT count(*) AS n FROM hosts", vec![])?;
        Ok(ListReply { hosts: rows.into_iter().map(|r| r.host).collect(), total })
    }

    /// The answer to `call`, as JSON.
    fn answer(&self, call: &LedgerCall) -> serde_json::Result<String> {
        match call {
            LedgerCall::Admit(req) => serde_json::to_string(&Answer::from(self.admit(req))),
            LedgerCall::List { limit } => serde_json::to_string(&Answer::from(self.list(*limit))),
        }
    }
}

impl DurableObject for TokenLedger {
    fn new(state: State, _env: Env) -> Self {
        TokenLedger { state }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let text = match serde_json::from_str(&req.text().await?) {
            Ok(call) => self.answer(&call)?,
            Err(e) => {
                let e = ApiError::internal(format!("bad request to the token ledger: {e}"));
                serde_json::to_string(&Answer::<()>::Refused(e))?
            }
        };
        Response::ok(text)
    }
}
