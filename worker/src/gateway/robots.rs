//! robots.txt, fetched by the gateway at a departure the host's object reserved for it, and reported back to
//! the object (which reads it with the core).

use crate::api::ApiError;
use crate::gateway::turn::HostVisit;
use crate::js;
use crate::protocol::{Departure, RobotsRequest};
use hostpace::robots::MAX_ROBOTS_BYTES;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::web_sys;

/// Fetch the host's robots.txt at the departure `dep`, and report it (or its failure) to the host's object.
pub(crate) async fn fetch_robots(visit: &HostVisit<'_>, dep: &Departure) -> Result<(), ApiError> {
    let cfg = visit.cfg;
    let headers =
        vec![("user-agent".to_owned(), cfg.user_agent.clone()), ("accept".to_owned(), "text/plain".to_owned())];
    let timeout = cfg.fetch_timeout.as_secs_f64() * 1000.0;
    let fetched =
        JsFuture::from(js::upstream_fetch(&visit.target.robots_url(), &js::to_array(&headers), timeout)).await;
    let mut report = RobotsRequest {
        host: visit.host.host.clone(),
        status: None,
        headers: vec![],
        body: String::new(),
        user_agent: cfg.user_agent.clone(),
        permit_id: dep.permit_id,
    };
    if let Ok(response) = fetched {
        let response: web_sys::Response = response.unchecked_into();
        report.status = Some(response.status());
        report.headers = js::pairs(&response.headers());
        if (200..300).contains(&response.status()) {
            report.body = js::read_text(response.body(), MAX_ROBOTS_BYTES).await.map(|(t, _)| t).unwrap_or_default();
        } else {
            js::cancel_body(&response);
        }
    }
    visit.host.robots(&report).await?;
    visit.log("robots", 0, dep.wait_ms, &dep.layer, report.status);
    Ok(())
}
