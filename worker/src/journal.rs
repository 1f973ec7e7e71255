//! A host's recent departures, per token: what `GET /v1/hosts/{host}` shows of the host's access log to the token
//! that sent them (and to no other). Pure and synchronous, kept in the host's object in memory only: it is a
//! view, not state the pacing depends on, so it is never written to storage (a restarted object starts a new
//! journal) and costs no write per request.
//!
//! A departure is first reserved for a token ([`Journal::reserved`]: when, and the layer that set its wait); when
//! it goes ([`Journal::departed`]: the request is sent, or confirmed to the token that sends it) it joins the
//! token's log, in the order departures went, and gets the status of its answer when one is reported
//! ([`Journal::answered`]). One given back before it went is dropped ([`Journal::cancelled`]). Each token keeps its
//! last [`Journal::KEEP`] departures and as many reservations, so however much a token sends, it only ever pushes
//! out its own entries; tokens are the gateway's configured ones, so the journal is bounded by their number.

use serde::{Deserialize, Serialize};

/// What a departure was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Purpose {
    /// A caller's request.
    Request,
    /// The host's robots.txt, fetched before a caller's request.
    Robots,
}

/// One departure as `GET /v1/hosts/{host}` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Departed {
    /// When the request left (epoch milliseconds, the host object's clock).
    pub at_ms: f64,
    /// How long it waited for its turn: from when its departure was reserved until it left, in milliseconds.
    pub wait_ms: f64,
    /// The layer that set the wait (a core layer name; `none` when it could go at once).
    pub layer: String,
    /// The status of its answer; `0` when no answer came (a timeout or a network error); `null` while none has
    /// been reported.
    pub status: Option<u16>,
    /// What it was for.
    pub purpose: Purpose,
}

/// A departure reserved that has not gone yet.
#[derive(Clone, Debug, PartialEq)]
struct Reserved {
    /// The departure's id (or the robots.txt fetch's name) under which the token's calls find it.
    key: String,
    /// When it was reserved (epoch milliseconds).
    at_ms: f64,
    layer: String,
    purpose: Purpose,
}

/// One token's part of the journal.
#[derive(Clone, Debug, Default)]
struct Log {
    token: String,
    reserved: Vec<Reserved>,
    /// Departures that went, in the order they went, each with the key it went under.
    departed: Vec<(String, Departed)>,
}

/// The recent departures of one host, per token (a handful of tokens: a list, looked through).
#[derive(Clone, Debug, Default)]
pub struct Journal {
    logs: Vec<Log>,
}

/// `list` with its oldest element dropped when it holds [`Journal::KEEP`], then `item` appended.
fn keep_last<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= Journal::KEEP {
        list.remove(0);
    }
    list.push(item);
}

impl Journal {
    /// Departures kept per token (the oldest go first), and reservations not gone yet.
    pub const KEEP: usize = 200;

    /// A departure reserved at `now_ms` for `token`, found later by `key`, its wait set by `layer`.
    pub fn reserved(&mut self, token: &str, key: &str, purpose: Purpose, layer: &str, now_ms: f64) {
        let log = match self.logs.iter().position(|l| l.token == token) {
            Some(at) => &mut self.logs[at],
            None => {
                self.logs.push(Log { token: token.to_owned(), ..Log::default() });
                let last = self.logs.len() - 1;
                &mut self.logs[last]
            }
        };
        let reserved = Reserved { key: key.to_owned(), at_ms: now_ms, layer: layer.to_owned(), purpose };
        keep_last(&mut log.reserved, reserved);
    }

    /// `token`'s departure `key` left at `now_ms` (it must have been reserved, and not have gone already).
    pub fn departed(&mut self, token: &str, key: &str, now_ms: f64) {
        let Some(log) = self.log(token) else { return };
        let Some(at) = log.reserved.iter().position(|r| r.key == key) else { return };
        let r = log.reserved.remove(at);
        let wait_ms = (now_ms - r.at_ms).max(0.0);
        let departed = Departed { at_ms: now_ms, wait_ms, layer: r.layer, status: None, purpose: r.purpose };
        keep_last(&mut log.departed, (r.key, departed));
    }

    /// The answer to `token`'s departure `key`, which went, came with `status` (`0`: none came).
    pub fn answered(&mut self, token: &str, key: &str, status: u16) {
        let Some(log) = self.log(token) else { return };
        if let Some((_, d)) = log.departed.iter_mut().rev().find(|(k, _)| k == key) {
            d.status = Some(status);
        }
    }

    /// `token` gave departure `key` back before it went: it is dropped.
    pub fn cancelled(&mut self, token: &str, key: &str) {
        if let Some(log) = self.log(token) {
            log.reserved.retain(|r| r.key != key);
        }
    }

    /// `token`'s departures, in the order they went (at most [`Journal::KEEP`]).
    pub fn departures(&self, token: &str) -> Vec<Departed> {
        let log = self.logs.iter().find(|l| l.token == token);
        log.map_or_else(Vec::new, |log| log.departed.iter().map(|(_, d)| d.clone()).collect())
    }

    fn log(&mut self, token: &str) -> Option<&mut Log> {
        self.logs.iter_mut().find(|l| l.token == token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_departure_is_shown_once_it_left_with_its_wait_layer_and_status() {
        let mut j = Journal::default();
        j.reserved("a", "d1", Purpose::Request, "none", 1000.0);
        j.reserved("a", "d2", Purpose::Request, "interval", 1000.0);
        assert_eq!(j.departures("a"), vec![], "nothing has left yet");
        j.departed("a", "d1", 1001.0);
        j.departed("a", "d2", 1500.0);
        j.departed("a", "d2", 1700.0); // a second confirmation changes nothing
        j.answered("a", "d1", 200);
        let shown = j.departures("a");
        assert_eq!(shown.len(), 2);
        assert_eq!(
            (shown[0].at_ms, shown[0].wait_ms, shown[0].layer.as_str(), shown[0].status),
            (1001.0, 1.0, "none", Some(200))
        );
        assert_eq!(
            (shown[1].at_ms, shown[1].wait_ms, shown[1].layer.as_str(), shown[1].status),
            (1500.0, 500.0, "interval", None)
        );
    }

    #[test]
    fn a_token_sees_only_its_own_departures() {
        let mut j = Journal::default();
        j.reserved("a", "d1", Purpose::Request, "none", 0.0);
        j.reserved("b", "d2", Purpose::Robots, "none", 0.0);
        j.departed("a", "d1", 1.0);
        j.departed("b", "d2", 2.0);
        // another token naming a's departure changes nothing
        j.departed("b", "d1", 9.0);
        j.answered("b", "d1", 429);
        assert_eq!(j.departures("a").iter().map(|d| (d.at_ms, d.status)).collect::<Vec<_>>(), vec![(1.0, None)]);
        assert_eq!(
            j.departures("b").iter().map(|d| (d.at_ms, d.purpose)).collect::<Vec<_>>(),
            vec![(2.0, Purpose::Robots)]
        );
        assert_eq!(j.departures("c"), vec![]);
    }

    #[test]
    fn a_cancelled_reservation_is_dropped_and_a_status_needs_a_departure() {
        let mut j = Journal::default();
        j.reserved("a", "d1", Purpose::Request, "burst", 0.0);
        j.answered("a", "d1", 503); // not sent: no status
        j.cancelled("a", "d1");
        j.departed("a", "d1", 5.0);
        assert_eq!(j.departures("a"), vec![]);
        j.reserved("a", "d2", Purpose::Request, "none", 0.0);
        j.departed("a", "d2", 1.0);
        j.cancelled("a", "d2"); // it went: it stays
        j.answered("a", "d2", 0);
        assert_eq!(j.departures("a")[0].status, Some(0));
    }

    #[test]
    fn each_token_keeps_its_last_entries_and_a_flood_pushes_out_only_its_own() {
        let mut j = Journal::default();
        j.reserved("victim", "v", Purpose::Request, "none", 0.0);
        j.departed("victim", "v", 1.0);
        for i in 0..Journal::KEEP + 50 {
            let key = format!("f{i}");
            j.reserved("flood", &key, Purpose::Request, "none", i as f64);
            j.departed("flood", &key, i as f64 + 0.5);
        }
        let flood = j.departures("flood");
        assert_eq!(flood.len(), Journal::KEEP);
        assert_eq!(flood[0].at_ms, 50.5, "the oldest went first");
        assert_eq!(j.departures("victim").len(), 1);
    }
}
