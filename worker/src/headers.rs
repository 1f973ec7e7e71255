//! Header filtering between the caller, the gateway and the target.
//!
//! Toward the target: hop-by-hop headers (RFC 9110 §7.6.1, and any header a `Connection` header names) are
//! dropped, and so are the caller's credentials for the gateway (`Authorization`, `Cookie`), the gateway's own
//! `Hostpace-*` controls, headers that describe the caller's connection (`Host`, `Content-Length`, `CF-*`,
//! `X-Forwarded-*`, `Forwarded`, `X-Real-IP`) and `User-Agent` / `Accept-Encoding` (the gateway sends its own
//! user agent — the one its robots.txt rules are matched for — and the runtime negotiates encodings).
//!
//! Toward the caller: hop-by-hop headers, `Content-Length` (the body is streamed), `Set-Cookie` (the gateway's
//! origin must not collect cookies of the sites it fetches) and any `Hostpace-*` header from the target (only
//! the gateway sets those) are dropped.

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

/// Headers of the caller never sent to a target (besides hop-by-hop ones).
const NOT_FORWARDED: [&str; 10] = [
    "authorization",
    "cookie",
    "host",
    "content-length",
    "user-agent",
    "accept-encoding",
    "forwarded",
    "x-real-ip",
    "origin",
    "referer",
];

/// Headers of a target's response never passed to the caller (besides hop-by-hop ones).
const NOT_RETURNED: [&str; 2] = ["content-length", "set-cookie"];

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
        .filter(|(n, _)| {
            !hop_by_hop(n, &listed)
                && !NOT_FORWARDED.contains(&n.as_str())
                && !n.starts_with("hostpace-")
                && !n.starts_with("cf-")
                && !n.starts_with("x-forwarded-")
        })
        .take(MAX_HEADERS)
        .collect()
}

/// The target's response headers that may go back to the caller (names lowercased).
pub fn response_headers(upstream: &[(String, String)]) -> Vec<(String, String)> {
    let listed = connection_tokens(upstream);
    upstream
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .filter(|(n, _)| !hop_by_hop(n, &listed) && !NOT_RETURNED.contains(&n.as_str()) && !n.starts_with("hostpace-"))
        .take(MAX_HEADERS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(names(&response_headers(&upstream)), ["content-type", "retry-after", "location"]);
    }

    #[test]
    fn header_count_is_bounded() {
        let many: Vec<(String, String)> = (0..500).map(|i| (format!("x-{i}"), "v".to_string())).collect();
        assert_eq!(forward_request_headers(&many).len(), MAX_HEADERS);
        assert_eq!(response_headers(&many).len(), MAX_HEADERS);
    }
}
