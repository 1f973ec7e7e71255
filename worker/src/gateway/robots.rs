//! robots.txt, fetched by the gateway at a departure the host's object reserved for it, and reported back to
//! the object with the fetch's number (the object reads it with the core's `RobotsFile`: what the status means,
//! the rules, the Crawl-delay, when to fetch again).
//!
//! Redirects are followed, at most [`MAX_ROBOTS_HOPS`] (RFC 9309 §2.3.1.2), within one overall deadline
//! (`CRAWL_FETCH_TIMEOUT_SEC`). Each hop is a new target: checked as a caller's target is (a hop to a private
//! address is not followed), and sent at its host's turn, a departure of that host's own taken within the
//! deadline (the permit of the hop before is given back first, so a hop to the same host never waits for its
//! own). The hop's host's own robots.txt is not asked, and the hop does not count against a token's hosts. A
//! redirect not followed (a hop to a private address, or to a host an operator blocked) is reported as its 3xx,
//! which the core reads as "unavailable": everything allowed. Any failure on the way (no answer, a hop that may
//! not go in time) is reported as no answer: the host's object always hears back.

use crate::api::{ApiError, Refusal};
use crate::gateway::host_client::{HostClient, Sent};
use crate::gateway::logs;
use crate::gateway::turn::{send_at, HostVisit};
use crate::js;
use crate::protocol::{robots_entry, robots_hop_entry, AskReply, AskerWire, Claim, Departure, Outgoing, RobotsRequest};
use crate::target::{check_target, Target};
use hostpace::robots::MAX_ROBOTS_BYTES;
use worker::web_sys;

/// Redirects of robots.txt followed, at most.
pub(crate) const MAX_ROBOTS_HOPS: u32 = 5;

/// What a fetch of robots.txt came back with.
struct Fetched {
    status: u16,
    headers: Vec<(String, String)>,
    /// The body of a 2xx (at most [`MAX_ROBOTS_BYTES`]), else empty.
    body: String,
}

/// Fetch the host's robots.txt at the departure `dep`, and report it (or its failure) to the host's object. The
/// fetch is in the journal as `asker`'s, each redirect hop too (in the journal of the host it went to).
pub(crate) async fn fetch_robots(
    visit: &HostVisit<'_>,
    dep: &Departure,
    asker: Option<&AskerWire>,
) -> Result<(), ApiError> {
    let cfg = visit.cfg;
    let Some(fetch) = dep.robots_fetch else {
        visit.host.release(dep.permit_id).await?;
        return Err(ApiError::internal("the host object reserved a robots.txt fetch without its number"));
    };
    // the fetch's time runs from its departure, not from now
    let deadline = dep.departs_ms.max(js::now_ms()) + cfg.fetch_timeout.as_secs_f64() * 1000.0;
    let journal = asker.map(|a| Claim { token: a.token.clone(), id: robots_entry(fetch) });
    let fetched = follow(visit, dep, asker, journal, deadline).await;
    let status = fetched.as_ref().map(|f| f.status);
    let (headers, body) = fetched.map(|f| (f.headers, f.body)).unwrap_or_default();
    let report = RobotsRequest {
        host: visit.host.host.clone(),
        status,
        headers,
        body,
        user_agent: cfg.user_agent.clone(),
        fetch,
    };
    visit.host.robots(report).await?;
    visit.log("robots", 0, dep.wait_ms, &dep.layer, status);
    Ok(())
}

/// GET the host's `/robots.txt` at `dep`, following redirects; `None` when no answer came by `deadline_ms` (epoch
/// ms). Each departure's permit goes back as soon as its answer has come (before a hop asks for one). A hop is
/// `asker`'s departure at its host (under its bound, taking its turn there). The first request stamps `journal`,
/// each hop an entry of its own named after it.
async fn follow(
    visit: &HostVisit<'_>,
    dep: &Departure,
    asker: Option<&AskerWire>,
    mut journal: Option<Claim>,
    deadline_ms: f64,
) -> Option<Fetched> {
    let first = journal.clone();
    let cfg = visit.cfg;
    let headers = [("user-agent".to_owned(), cfg.user_agent.clone()), ("accept".to_owned(), "text/plain".to_owned())];
    let mut url = visit.target.robots_url();
    let mut at = (visit.host.clone(), dep.clone());
    let mut hops = 0;
    loop {
        let (host, dep) = &at;
        // the object waits for the departure first: what is left of the deadline after it (the object's clock
        // reserved it, the Worker's measures the rest: the two are the runtime's one clock)
        let left = deadline_ms - dep.departs_ms.max(js::now_ms());
        let sent = match left > 0.0 {
            true => {
                let request = Outgoing { url: url.clone(), headers: headers.to_vec(), timeout_ms: left };
                send_at(host, (dep, None), asker, journal.take(), &request).await
            }
            false => Ok((Sent::NotYet, 0.0)),
        };
        if let Err(e) = host.release(dep.permit_id).await {
            logs::error(&e);
        }
        let response = match sent {
            Ok((Sent::Answer { response, .. }, _)) => response,
            Ok(_) => return None,
            Err(e) => {
                logs::error(&e);
                return None;
            }
        };
        let status = response.status();
        let location = (300..400).contains(&status).then(|| response.headers().get("location").ok().flatten());
        let next = location
            .flatten()
            .and_then(|l| js::resolve_url(&l, &url))
            .and_then(|n| check_target(&n, cfg.allow_private).ok());
        match next {
            Some(target) if hops < MAX_ROBOTS_HOPS => {
                js::cancel_body(&response);
                hops += 1;
                let from = &visit.host.host;
                journal =
                    first.as_ref().map(|c| Claim { token: c.token.clone(), id: robots_hop_entry(&c.id, from, hops) });
                match hop_turn(visit, &target, deadline_ms, asker, journal.clone()).await {
                    Ok(Some(hop)) => at = hop,
                    Ok(None) => return None,
                    // a hop to a host an operator blocked is not followed: the redirect counts as its 3xx
                    Err(e) if e.code == Refusal::HostBlocked => {
                        return Some(Fetched { status, headers: js::pairs(&response.headers()), body: String::new() })
                    }
                    Err(e) => {
                        logs::error(&e);
                        return None;
                    }
                }
                url = target.url.href;
            }
            _ => return read(response, deadline_ms).await,
        }
    }
}

/// The answer of the last hop: its status, headers and (for a 2xx) body; `None` when a 2xx body did not arrive
/// whole by `deadline_ms`.
async fn read(response: web_sys::Response, deadline_ms: f64) -> Option<Fetched> {
    let status = response.status();
    let headers = js::pairs(&response.headers());
    if !(200..300).contains(&status) {
        js::cancel_body(&response);
        return Some(Fetched { status, headers, body: String::new() });
    }
    let left = (deadline_ms - js::now_ms()).max(0.0);
    let body = match response.body() {
        // a longer file is cut at the limit (RFC 9309 §2.5), which the core's parser reads as such
        Some(stream) => js::read_body(&stream, MAX_ROBOTS_BYTES as u64, left).await.ok()?.0.to_vec(),
        None => Vec::new(),
    };
    Some(Fetched { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

/// A departure for a redirect's target at its host (the visit's own host, or another's object) that may go by
/// `deadline_ms`, with the host's client: `asker`'s (it waits at its bound, within the deadline), reserved in its
/// journal as `journal`; `None` when none may go in time.
async fn hop_turn(
    visit: &HostVisit<'_>,
    target: &Target,
    deadline_ms: f64,
    asker: Option<&AskerWire>,
    journal: Option<Claim>,
) -> Result<Option<(HostClient, Departure)>, ApiError> {
    let host =
        if target.key == visit.target.key { visit.host.clone() } else { HostClient::new(visit.env, &target.key)? };
    loop {
        let left = deadline_ms - js::now_ms();
        if left <= 0.0 {
            return Ok(None);
        }
        let asking = asker.map(|a| AskerWire { waits: true, ..a.clone() });
        match host.ask(Some(left), &target.url.href, asking, journal.clone()).await? {
            AskReply::Go(dep) if dep.reserved => return Ok(Some((host, dep))),
            // every concurrency permit is held: ask again after the wait
            AskReply::Go(dep) => crate::departure::sleep_ms(dep.wait_ms.min(left)).await,
            _ => return Ok(None),
        }
    }
}
