//! The bound on the hosts one token may create: each token's ledger object admits a host once, and the isolate
//! remembers what was admitted, to skip the round trip next time.

use crate::api::{ApiError, Refusal};
use crate::auth::token_id;
use crate::gateway::host_client::{call_ledger, object_stub};
use crate::ledger::{AdmitReply, AdmitRequest, LedgerCall, ListReply};
use hostpace::HostKey;
use std::cell::RefCell;
use std::collections::HashSet;
use worker::Env;

/// Admitted (token, host) pairs remembered per isolate, to skip the ledger round trip.
const ADMITTED_CACHE: usize = 100_000;

thread_local! {
    static ADMITTED: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// Admit `key` for `token` under a bound of `max` hosts (403 `host_limit` beyond it); remembered per isolate once
/// admitted.
pub(crate) async fn admit(env: &Env, token: &str, key: &HostKey, max: u32) -> Result<(), ApiError> {
    if !ask_ledger(env, token, key, max, true).await? {
        return Err(ApiError::new(
            Refusal::HostLimit,
            format!("this token has used {max} hosts, the most it may (CRAWL_MAX_HOSTS_PER_TOKEN = {max})"),
        ));
    }
    Ok(())
}

/// Whether `token` has used `key` (asked of its ledger; nothing is admitted).
pub(crate) async fn has_used(env: &Env, token: &str, key: &HostKey) -> Result<bool, ApiError> {
    ask_ledger(env, token, key, 0, false).await
}

/// The hosts `token` has used (at most `limit`, in the order it first used them), and how many in all.
pub(crate) async fn used_hosts(env: &Env, token: &str, limit: u32) -> Result<ListReply, ApiError> {
    let stub = object_stub(env, "LEDGER", &token_id(token), "token ledger")?;
    call_ledger(&stub, &LedgerCall::List { limit }).await
}

/// Ask `token`'s ledger about `key` (admitting it under `max` when `create`); a yes is remembered per isolate.
async fn ask_ledger(env: &Env, token: &str, key: &HostKey, max: u32, create: bool) -> Result<bool, ApiError> {
    let id = token_id(token);
    let remembered = format!("{id} {key}");
    if ADMITTED.with(|a| a.borrow().contains(&remembered)) {
        return Ok(true);
    }
    let stub = object_stub(env, "LEDGER", &id, "token ledger")?;
    let call = LedgerCall::Admit(AdmitRequest { host: key.to_string(), max, create });
    let reply: AdmitReply = call_ledger(&stub, &call).await?;
    if !reply.admitted {
        return Ok(false);
    }
    ADMITTED.with(|a| {
        let mut a = a.borrow_mut();
        if a.len() >= ADMITTED_CACHE {
            a.clear();
        }
        a.insert(remembered);
    });
    Ok(true)
}
