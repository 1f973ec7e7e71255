//! A host's one concurrency permit between a token that reserves and never departs (`/v1/acquire` only) and a
//! token that fetches through the gateway (`/v1/fetch`), decided by the host's desk at exact instants: the
//! hoarder's permit goes back 5 s past its instant, the fetching token takes it then, and the hoarder takes no
//! other while that token wants the host, not even between two of its requests. (Tokens that both depart take
//! the permit in turn: `tokens_waiting_for_one_permit_take_it_by_turns` in `desk.rs`.)

use hostpace::{Decision, Departure, Instant, Layer, Policy, Turn, Why};
use hostpace_worker::desk::{Asker, HostDesk};
use std::time::Duration;

const HOARDER: Asker<'static> = Asker { token: "token-h", max_reservations: 4, waits: false };
const FETCHER: Asker<'static> = Asker { token: "token-f", max_reservations: 4, waits: true };

fn t(ms: u64) -> Instant {
    // epoch-based instants, as the Durable Object passes them
    Instant::from_millis(1_764_000_000_000 + ms)
}

/// One permit leased 60 s (`CRAWL_MAX_CONCURRENCY=1`), 0.5/s with a burst of 1: departures 2 s apart.
fn desk() -> HostDesk {
    let policy = Policy { max_concurrency: 1, rate_per_sec: 0.5, burst_capacity: 1.0, ..Policy::default() };
    HostDesk::new(policy, hostpace::HostKey::parse("example.com").unwrap()).unwrap()
}

/// `asker` asks at `now`: the departure reserved for it (with its id), if one was.
fn ask(desk: &mut HostDesk, asker: Asker<'_>, id: &str, now: Instant) -> Option<(Decision, String)> {
    match desk.ask_as(asker, id.to_owned(), None, None, now) {
        Ok((Turn::Go(d), Some(id))) if d.reserved => Some((d, id)),
        _ => None,
    }
}

/// `asker`'s request reserved `d` as `id` goes: confirmed from its instant until the core says go (as the host's
/// object does before it sends it; the host's spacing keeps a margin after the one before), then its answer comes
/// 50 ms later and its permit goes back. When the answer came.
fn fetch(desk: &mut HostDesk, asker: Asker<'_>, d: &Decision, id: &str) -> Instant {
    let mut now = d.departs;
    loop {
        match desk.depart(d.departs, None, Some((asker.token, id)), now).unwrap() {
            Departure::Go => break,
            Departure::Wait(wait) if wait < Duration::from_secs(1) => now = now.saturating_add(wait),
            other => panic!("{other:?} for {d:?}"),
        }
    }
    desk.departed(asker.token, id, true);
    let done = now.saturating_add(Duration::from_millis(50));
    assert!(desk.release(d.permit.expect("a permit").id));
    done
}

#[test]
fn a_token_that_reserves_and_never_departs_keeps_the_permit_from_a_fetching_token_once_for_the_grace() {
    let mut desk = desk();
    // the hoarder's first reservation takes the permit, for now; nothing of it is ever confirmed
    let (hoarded, _) = ask(&mut desk, HOARDER, "h0", t(0)).expect("the hoarder reserves first");
    assert_eq!((hoarded.departs, hoarded.permit.unwrap().expires), (t(0), t(5_000)));
    // the fetching token comes at 0.5 s: it waits for the permit, until 5 s past the hoarder's instant at most,
    // asking again every 250 ms (as its request held in the host's object does)
    for at in (500..5_000).step_by(250) {
        match desk.ask_as(FETCHER, "f0".into(), None, None, t(at)).unwrap() {
            (Turn::Go(d), None) => assert_eq!((d.reserved, d.layer, d.departs), (false, Layer::Concurrency, t(5_000))),
            other => panic!("{other:?}"),
        }
    }
    assert!(ask(&mut desk, HOARDER, "h1", t(4_999)).is_none(), "the hoarder holds its one permit");
    // at 5 s its permit is back: the hoarder, asking first, leaves it to the token that waits
    let (told, id) = desk.ask_as(HOARDER, "h2".into(), None, None, t(5_000)).unwrap();
    assert!(matches!(told, Turn::Later { why: Why::Layer(Layer::Concurrency), .. }) && id.is_none(), "{told:?}");
    // then the fetching token's five requests, one after the other, each sent once the one before is answered
    // (50 ms later); the hoarder asks again right after each answer and in between, and takes nothing
    let (mut now, mut last_ask) = (t(5_000), t(5_000));
    let mut went = Vec::new();
    for i in 0..5 {
        last_ask = now;
        let (d, id) = ask(&mut desk, FETCHER, &format!("f{}", i + 1), now).expect("the fetching token's turn");
        for probe in [now, d.departs] {
            assert!(ask(&mut desk, HOARDER, &format!("h-{i}-{}", probe.as_nanos()), probe).is_none(), "at {probe:?}");
        }
        let done = fetch(&mut desk, FETCHER, &d, &id);
        assert!(ask(&mut desk, HOARDER, &format!("h-{i}-gap"), done).is_none(), "between two of its requests");
        went.push(d.departs);
        now = done;
    }
    assert_eq!(went, [t(5_000), t(7_000), t(9_000), t(11_000), t(13_000)], "the host's pace, from the grace's end");
    // 5 s after the fetching token's last ask it no longer wants the host: the hoarder may have the permit again
    let wanted_until = last_ask.saturating_add(Duration::from_secs(5));
    assert!(ask(&mut desk, HOARDER, "h-late", Instant::from_nanos(wanted_until.as_nanos() - 1)).is_none());
    assert!(ask(&mut desk, HOARDER, "h-after", wanted_until).is_some());
}
