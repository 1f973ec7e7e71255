//! A host's recent departures, per token: what `GET /v1/hosts/{host}` shows of the host's access log to the token
//! that sent them (and to no other). Pure and synchronous, kept in the host's object in memory only: it is a
//! view, not state the pacing depends on, so it is never written to storage (a restarted object starts a new
//! journal) and costs no write per request.
//!
//! A departure is first reserved for a token ([`Journal::reserved`]: when it was asked for, the instant reserved,
//! and the layer that set its wait); when it goes ([`Journal::departed`]: the request is sent, or confirmed to the
//! token that sends it) it joins the token's log, in the order departures went, and gets the status of its answer
//! when one is reported ([`Journal::answered`]). An answer reported for a departure never confirmed (a token may
//! send at its reserved instant without asking again) means it went: at the instant reserved for it. One given
//! back before it went is dropped ([`Journal::cancelled`]). Each token keeps its last [`Journal::KEEP`] departures
//! and as many reservations, so however much a token sends, it only ever pushes out its own entries; tokens are
//! the gateway's configured ones, so the journal is bounded by their number.

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
    /// How long it waited for its turn: from when its departure was asked for until it left, in milliseconds.
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
    /// When it was asked for (epoch milliseconds).
    asked_ms: f64,
    /// The instant reserved for it (epoch milliseconds).
    departs_ms: f64,
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

/// When a departure was reserved for a token: when it was asked for and the instant reserved for it (epoch
/// milliseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Asked {
    /// When the token asked (the wait shown counts from here, holds at the host included).
    pub at_ms: f64,
    /// The instant reserved for the departure.
    pub departs_ms: f64,
}

impl Journal {
    /// Departures kept per token (the oldest go first), and reservations not gone yet.
    pub const KEEP: usize = 200;

    /// A departure reserved for `token` as `asked` says, found later by `key`, its wait set by `layer`.
    pub fn reserved(&mut self, token: &str, key: &str, purpose: Purpose, layer: &str, asked: Asked) {
        let log = match self.logs.iter().position(|l| l.token == token) {
            Some(at) => &mut self.logs[at],
            None => {
                self.logs.push(Log { token: token.to_owned(), ..Log::default() });
                let last = self.logs.len() - 1;
                &mut self.logs[last]
            }
        };
        let (asked_ms, departs_ms) = (asked.at_ms, asked.departs_ms);
        let reserved = Reserved { key: key.to_owned(), asked_ms, departs_ms, layer: layer.to_owned(), purpose };
        keep_last(&mut log.reserved, reserved);
    }

    /// `token`'s departure `key` left at `now_ms` (it must have been reserved, and not have gone already).
    pub fn departed(&mut self, token: &str, key: &str, now_ms: f64) {
        let Some(log) = self.log(token) else { return };
        let Some(at) = log.reserved.iter().position(|r| r.key == key) else { return };
        log.went(at, now_ms, None);
    }

    /// The answer to `token`'s departure `key` came with `status` (`0`: none came). A departure not confirmed
    /// before went at the instant reserved for it.
    pub fn answered(&mut self, token: &str, key: &str, status: u16) {
        let Some(log) = self.log(token) else { return };
        if let Some((_, d)) = log.departed.iter_mut().rev().find(|(k, _)| k == key) {
            d.status = Some(status);
        } else if let Some(at) = log.reserved.iter().position(|r| r.key == key) {
            let departs_ms = log.reserved[at].departs_ms;
            log.went(at, departs_ms, Some(status));
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

impl Log {
    /// The reservation at `at` went at `at_ms`: it joins the departures in the order they went.
    fn went(&mut self, at: usize, at_ms: f64, status: Option<u16>) {
        let r = self.reserved.remove(at);
        let wait_ms = (at_ms - r.asked_ms).max(0.0);
        let departed = Departed { at_ms, wait_ms, layer: r.layer, status, purpose: r.purpose };
        keep_last(&mut self.departed, (r.key, departed));
        // one reported after later ones went moves back to its place
        let mut i = self.departed.len() - 1;
        while i > 0 && self.departed[i - 1].1.at_ms > at_ms {
            self.departed.swap(i - 1, i);
            i -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asked for at `ms`, reserved for then.
    fn at(ms: f64) -> Asked {
        Asked { at_ms: ms, departs_ms: ms }
    }

    #[test]
    fn a_departure_is_shown_once_it_left_with_its_wait_layer_and_status() {
        let mut j = Journal::default();
        j.reserved("a", "d1", Purpose::Request, "none", at(1000.0));
        j.reserved("a", "d2", Purpose::Request, "interval", at(1000.0));
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
        j.reserved("a", "d1", Purpose::Request, "none", at(0.0));
        j.reserved("b", "d2", Purpose::Robots, "none", at(0.0));
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
    fn a_cancelled_reservation_is_dropped_and_one_that_went_stays() {
        let mut j = Journal::default();
        j.reserved("a", "d1", Purpose::Request, "burst", at(0.0));
        j.cancelled("a", "d1");
        j.departed("a", "d1", 5.0);
        j.answered("a", "d1", 503);
        assert_eq!(j.departures("a"), vec![], "given back: it never went");
        j.reserved("a", "d2", Purpose::Request, "none", at(0.0));
        j.departed("a", "d2", 1.0);
        j.cancelled("a", "d2"); // it went: it stays
        j.answered("a", "d2", 0);
        assert_eq!(j.departures("a")[0].status, Some(0));
    }

    #[test]
    fn an_answer_without_a_confirmation_went_at_its_reserved_instant_in_its_place() {
        let mut j = Journal::default();
        // asked at 100, held, reserved for 900: sent by the token itself, never confirmed
        j.reserved("a", "early", Purpose::Request, "interval", Asked { at_ms: 100.0, departs_ms: 900.0 });
        j.reserved("a", "late", Purpose::Request, "interval", Asked { at_ms: 150.0, departs_ms: 1100.0 });
        j.departed("a", "late", 1100.0);
        j.answered("a", "late", 200);
        j.answered("a", "early", 429); // reported after a later one went
        let shown: Vec<_> = j.departures("a").iter().map(|d| (d.at_ms, d.wait_ms, d.status)).collect();
        assert_eq!(shown, vec![(900.0, 800.0, Some(429)), (1100.0, 950.0, Some(200))]);
        j.departed("a", "early", 1200.0); // a confirmation after its answer changes nothing
        assert_eq!(j.departures("a").len(), 2);
    }

    #[test]
    fn each_token_keeps_its_last_entries_and_a_flood_pushes_out_only_its_own() {
        let mut j = Journal::default();
        j.reserved("victim", "v", Purpose::Request, "none", at(0.0));
        j.departed("victim", "v", 1.0);
        for i in 0..Journal::KEEP + 50 {
            let key = format!("f{i}");
            j.reserved("flood", &key, Purpose::Request, "none", at(i as f64));
            j.departed("flood", &key, i as f64 + 0.5);
        }
        let flood = j.departures("flood");
        assert_eq!(flood.len(), Journal::KEEP);
        assert_eq!(flood[0].at_ms, 50.5, "the oldest went first");
        assert_eq!(j.departures("victim").len(), 1);
    }
}
