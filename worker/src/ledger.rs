//! The Durable Object that bounds how many hosts one token may create: one object per token (named by
//! [`crate::auth::token_id`]), holding the set of hosts it admitted in SQLite. A host already admitted is always
//! admitted again; a new one only while the token is under its bound. It also answers which hosts a token has
//! used (what the token may read reports of). Synchronous storage: no await.

use crate::api::ApiError;
use serde::{Deserialize, Serialize};
use worker::{durable_object, DurableObject, Env, Request, Response, SqlStorageValue, State};

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

#[derive(Deserialize)]
struct Count {
    n: f64,
}

/// A token's ledger of hosts.
#[durable_object(fetch)]
pub struct TokenLedger {
    state: State,
}

impl TokenLedger {
    fn admit(&self, req: &AdmitRequest) -> Result<AdmitReply, ApiError> {
        let sql = self.state.storage().sql();
        let fail = |e: worker::Error| ApiError::internal(format!("token ledger storage: {e}"));
        sql.exec("CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY)", None).map_err(fail)?;
        let count = |sql: &worker::SqlStorage, q: &str, b: Vec<SqlStorageValue>| -> Result<u32, ApiError> {
            let rows: Vec<Count> = sql.exec(q, b).map_err(fail)?.to_array().map_err(fail)?;
            Ok(rows.first().map_or(0, |r| r.n as u32))
        };
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
}

impl DurableObject for TokenLedger {
    fn new(state: State, _env: Env) -> Self {
        TokenLedger { state }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let body = crate::js::call_text(&mut req).await?;
        let answer = serde_json::from_str::<AdmitRequest>(&body)
            .map_err(|e| ApiError::internal(format!("bad request to the token ledger: {e}")))
            .and_then(|r| self.admit(&r));
        match answer {
            Ok(reply) => crate::js::reply(&serde_json::to_string(&reply)?),
            Err(e) => Response::error(e.body(), e.status),
        }
    }
}
