//! Header filtering between the caller, the gateway and the target.
//!
//! Toward the target: hop-by-hop headers (RFC 9110 §7.6.1, and any header a `Connection` header names) are
//! dropped, and so are the caller's credentials for the gateway (`Authorization`, `Cookie`), the gateway's own
//! `Hostpace-*` controls, headers that describe the caller's connection (`Host`, `Content-Length`, `CF-*`,
//! `X-Forwarded-*`, `Forwarded`, `X-Real-IP`) and `User-Agent` / `Accept-Encoding` (the gateway sends its own
//! user agent — the one its robots.txt rules are matched for — and the runtime negotiates encodings).
//!
//! The caller's own address (`True-Client-IP`, `X-Client-IP`, …) and method overrides (`X-HTTP-Method-Override`,
//! …) never go either: the target sees the gateway's GET, nothing else.
//!
//! Toward the caller, the answer is served on the gateway's own origin (which also serves the playground), so
//! nothing in it may act on that origin: hop-by-hop headers, `Content-Length` (the body is streamed),
//! `Set-Cookie` (the gateway's origin must not collect cookies of the sites it fetches), any `Hostpace-*` header
//! from the target (only the gateway sets those), `Strict-Transport-Security`, `Alt-Svc`, `Clear-Site-Data`,
//! `Access-Control-*` and `Sec-WebSocket-*` are dropped. `Location` is resolved against the target's URL and
//! returned as `Hostpace-Location` (a client that follows redirects would otherwise resolve a relative one
//! against the gateway and send its token there); `X-Content-Type-Options: nosniff` and
//! `Content-Security-Policy: sandbox` are added, so a fetched page never runs as the gateway's.

/// Hop-by-hop headers: meaningful for one connection only, never forwarded.
pub const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Headers of the caller never sent to a target (besides hop-by-hop ones and the prefixes in [`forwardable`]).
const NOT_FORWARDED: [&str; 22] = [
    "authorization",
    "cookie",
    "host",
    "content-length",
    "user-agent",
    "accept-encoding",
    "forwarded",
    "origin",
    "referer",
    // the caller's address, as proxies and CDNs spell it
    "x-real-ip",
    "true-client-ip",
    "x-client-ip",
    "client-ip",
    "x-cluster-client-ip",
    "fastly-client-ip",
    "x-originating-ip",
    "x-remote-ip",
    "x-remote-addr",
    "x-host",
    // method overrides: the target gets a GET
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

/// Headers of a target's response never passed to the caller (besides hop-by-hop ones and the prefixes in
/// [`returnable`]).
const NOT_RETURNED: [&str; 6] =
    ["content-length", "set-cookie", "location", "strict-transport-security", "alt-svc", "clear-site-data"];

/// Headers the gateway adds to every relayed answer.
pub const ADDED_TO_ANSWERS: [(&str, &str); 2] =
    [("x-content-type-options", "nosniff"), ("content-security-policy", "sandbox")];

/// A caller's header (lowercase) that may go to the target, if no `Connection` header names it.
fn forwardable(name: &str) -> bool {
    !NOT_FORWARDED.contains(&name) && !["hostpace-", "cf-", "x-forwarded-"].iter().any(|p| name.starts_with(p))
}

/// A target's header (lowercase) that may go back to the caller, if no `Connection` header names it.
fn returnable(name: &str) -> bool {
    !NOT_RETURNED.contains(&name)
        && !["hostpace-", "access-control-", "sec-websocket-"].iter().any(|p| name.starts_with(p))
}

/// The most headers passed either way (the rest are dropped).
pub const MAX_HEADERS: usize = 100;

/// Names listed in `Connection` headers (lowercase): hop-by-hop for this message.
fn connection_tokens(headers: &[(String, String)]) -> Vec<String> {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, v)| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

fn hop_by_hop(name: &str, listed: &[String]) -> bool {
    HOP_BY_HOP.contains(&name) || listed.iter().any(|t| t == name)
}

/// The caller's headers that may go to the target (names lowercased).
pub fn forward_request_headers(incoming: &[(String, String)]) -> Vec<(String, String)> {
    let listed = connection_tokens(incoming);
    incoming
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .filter(|(n, _)| !hop_by_hop(n, &listed) && forwardable(n))
        .take(MAX_HEADERS)
        .collect()
}

/// The target's response headers that may go back to the caller (names lowercased). Its `Location`, if any, is
/// returned as `hostpace-location`, resolved by `resolve` (against the target's URL: the Worker passes the
/// platform's WHATWG `URL`) and left out when it does not resolve to an `http:`/`https:` URL.
pub fn response_headers(
    upstream: &[(String, String)],
    resolve: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let listed = connection_tokens(upstream);
    let mut out: Vec<(String, String)> = upstream
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .filter(|(n, _)| !hop_by_hop(n, &listed) && returnable(n))
        .take(MAX_HEADERS)
        .collect();
    let location = upstream.iter().find(|(n, _)| n.eq_ignore_ascii_case("location"));
    let resolved = location.and_then(|(_, v)| resolve(v.trim())).filter(|u| {
        let scheme = u.split(':').next().unwrap_or("");
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    });
    if let Some(resolved) = resolved {
        out.push(("hostpace-location".to_owned(), resolved));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `location` resolved against `base` as a WHATWG parser does (the `url` crate follows the same standard).
    fn against(base: &str) -> impl Fn(&str) -> Option<String> + '_ {
        move |location| Some(url::Url::parse(base).ok()?.join(location).ok()?.to_string())
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn names(pairs: &[(String, String)]) -> Vec<&str> {
        pairs.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn requests_lose_hop_by_hop_headers_credentials_and_gateway_controls() {
        let incoming = h(&[
            ("Authorization", "Bearer gateway-token"),
            ("Proxy-Authorization", "Basic x"),
            ("Connection", "keep-alive, X-Secret"),
            ("X-Secret", "hop"),
            ("Keep-Alive", "timeout=5"),
            ("TE", "trailers"),
            ("Upgrade", "websocket"),
            ("Transfer-Encoding", "chunked"),
            ("Cookie", "session=1"),
            ("Host", "gateway.example"),
            ("Hostpace-Mode", "nowait"),
            ("CF-Connecting-IP", "1.2.3.4"),
            ("X-Forwarded-For", "1.2.3.4"),
            ("User-Agent", "curl"),
            ("Accept", "text/html"),
            ("Accept-Language", "en"),
            ("If-None-Match", "\"abc\""),
            ("True-Client-IP", "10.0.0.1"),
            ("X-Client-IP", "10.0.0.1"),
            ("X-Real-IP", "10.0.0.1"),
            ("X-Cluster-Client-IP", "10.0.0.1"),
            ("Client-IP", "10.0.0.1"),
            ("Fastly-Client-IP", "10.0.0.1"),
            ("X-HTTP-Method-Override", "DELETE"),
            ("X-HTTP-Method", "PUT"),
            ("X-Method-Override", "PATCH"),
        ]);
        let out = forward_request_headers(&incoming);
        assert_eq!(names(&out), ["accept", "accept-language", "if-none-match"]);
    }

    #[test]
    fn responses_lose_hop_by_hop_headers_cookies_and_spoofed_gateway_headers() {
        let upstream = h(&[
            ("Content-Type", "text/html"),
            ("Content-Length", "12"),
            ("Connection", "close, X-Private"),
            ("X-Private", "1"),
            ("Transfer-Encoding", "chunked"),
            ("Set-Cookie", "a=b"),
            ("Hostpace-Wait-Ms", "0"),
            ("Retry-After", "3"),
            ("Location", "http://example.com/next"),
        ]);
        assert_eq!(
            names(&response_headers(&upstream, against("http://example.com/"))),
            ["content-type", "retry-after", "hostpace-location"]
        );
    }

    #[test]
    fn responses_lose_what_would_act_on_the_gateways_origin() {
        let upstream = h(&[
            ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
            ("Alt-Svc", "h3=\":443\""),
            ("Clear-Site-Data", "\"*\""),
            ("Access-Control-Allow-Origin", "*"),
            ("Access-Control-Allow-Credentials", "true"),
            ("Sec-WebSocket-Accept", "x"),
            ("ETag", "\"v1\""),
        ]);
        assert_eq!(names(&response_headers(&upstream, against("https://example.com/"))), ["etag"]);
    }

    #[test]
    fn a_location_is_resolved_against_the_target_and_renamed() {
        let location = |value: &str| {
            let out = response_headers(&h(&[("Location", value)]), against("https://example.com/a/b?c=1"));
            assert!(names(&out).iter().all(|n| *n != "location"), "{value}: the raw Location never goes back");
            out.into_iter().find(|(n, _)| n == "hostpace-location").map(|(_, v)| v)
        };
        assert_eq!(location("/next").as_deref(), Some("https://example.com/next"));
        assert_eq!(location("next?x").as_deref(), Some("https://example.com/a/next?x"));
        assert_eq!(location("//other.example/p").as_deref(), Some("https://other.example/p"));
        assert_eq!(location("http://example.org/").as_deref(), Some("http://example.org/"));
        assert_eq!(location(" /spaced ").as_deref(), Some("https://example.com/spaced"));
        assert_eq!(location("javascript:alert(1)"), None);
        assert_eq!(location("http://[::1"), None);
    }

    #[test]
    fn header_count_is_bounded() {
        let many: Vec<(String, String)> = (0..500).map(|i| (format!("x-{i}"), "v".to_string())).collect();
        assert_eq!(forward_request_headers(&many).len(), MAX_HEADERS);
        assert_eq!(response_headers(&many, against("http://example.com/")).len(), MAX_HEADERS);
    }
}
