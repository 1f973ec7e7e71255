//! Target checks: the gateway is not an open proxy. Only absolute `http:`/`https:` URLs of bounded length, without
//! credentials, whose host is not private, loopback, link-local or otherwise internal (unless the operator allows
//! private targets, as tests do to reach an origin on 127.0.0.1).
//!
//! IP literals are judged by their address ranges after WHATWG parsing (so `http://0x7f.1/` is `127.0.0.1` and is
//! refused). Host names are judged by name: `localhost` and `*.localhost`, `*.local`, `*.internal`,
//! `*.home.arpa`, and single-label names (no dot, as an intranet name) are refused. What a public name resolves
//! to cannot be checked from a Worker (no DNS API); Cloudflare's own egress refuses private addresses.

use crate::api::{ApiError, Refusal};
use hostpace::{parse_http_url, Error, HostKey, HttpUrl, MAX_URL_LEN};
use std::net::{Ipv4Addr, Ipv6Addr};

/// A checked target: the parsed URL and its host key (the name of its Durable Object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL as the WHATWG parser serialized it (what is fetched).
    pub url: HttpUrl,
    /// The normalized host: one key however the URL spells the host.
    pub key: HostKey,
}

impl Target {
    /// The URL of this host's `/robots.txt` (same scheme, the normalized host).
    pub fn robots_url(&self) -> String {
        format!("{}://{}/robots.txt", self.url.scheme, self.key)
    }
}

/// Check `input` as a target URL. Errors: 414 `url_too_long`, 400 `invalid_url` (not absolute, not http/https,
/// credentials, bad host), 403 `private_target`.
pub fn check_target(input: &str, allow_private: bool) -> Result<Target, ApiError> {
    if input.len() > MAX_URL_LEN {
        return Err(ApiError::new(
            Refusal::UrlTooLong,
            format!("the target URL is {} bytes, more than the limit of {MAX_URL_LEN}", input.len()),
        ));
    }
    let invalid = |e: Error| match e {
        // never echo credentials back (or into a log)
        Error::InvalidUrl { input, reason } if input.contains('@') => {
            ApiError::new(Refusal::InvalidUrl, format!("invalid URL (not repeated: it may hold credentials): {reason}"))
        }
        e => ApiError::new(Refusal::InvalidUrl, e.to_string()),
    };
    let url = parse_http_url(input).map_err(invalid)?;
    let key = HostKey::of(&url, input).map_err(invalid)?;
    if !allow_private {
        if let Some(why) = internal_host(&url.host) {
            return Err(ApiError::new(
                Refusal::PrivateTarget,
                format!(
                    "target host {} is {why}; the gateway only fetches public hosts unless \
                     CRAWL_ALLOW_PRIVATE_TARGETS is true (locally: scripts/dev.sh --allow-local)",
                    url.host
                ),
            ));
        }
    }
    Ok(Target { url, key })
}

/// Why `host` (as a WHATWG parser serialized it: lowercase, IPv6 in brackets) is internal, or `None` if it is a
/// public name or address.
pub fn internal_host(host: &str) -> Option<&'static str> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return match v6.parse::<Ipv6Addr>() {
            Ok(ip) => internal_v6(ip),
            Err(_) => Some("not a valid IPv6 address"),
        };
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return internal_v4(ip);
    }
    let name = host;
    if name == "localhost" || name.ends_with(".localhost") {
        Some("a loopback name")
    } else if [".local", ".internal", ".home.arpa", ".lan", ".intranet", ".corp"].iter().any(|s| name.ends_with(s)) {
        Some("an internal name")
    } else if !name.contains('.') {
        Some("a single-label (intranet) name")
    } else {
        None
    }
}

/// Why an IPv4 address is not a public unicast address.
pub fn internal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 0 {
        Some("an unspecified (this-network) address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if a == 192 && b == 0 && c == 0 {
        Some("an IETF protocol address")
    } else if (a, b, c) == (192, 0, 2) || (a, b, c) == (198, 51, 100) || (a, b, c) == (203, 0, 113) {
        Some("a documentation (TEST-NET) address")
    } else if (a, b, c) == (192, 88, 99) {
        Some("a 6to4 relay anycast address")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("a benchmarking address")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("a multicast, broadcast or reserved address")
    } else {
        None
    }
}

/// Why an IPv6 address is not a public unicast address (addresses embedding IPv4 are judged by their IPv4 part).
pub fn internal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Some("a unique-local (private) address")
    } else if (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
        Some("a link-local or site-local address")
    } else if (s[0] & 0xff00) == 0xff00 {
        Some("a multicast address")
    } else if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d)
        internal_v4(embedded).or(if s[5] == 0 { Some("an IPv4-compatible address") } else { None })
    } else if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765)
        internal_v4(embedded)
    } else if s[..4] == [0x100, 0, 0, 0] {
        Some("a discard-only address")
    } else if s[0] == 0x2001 && s[1] < 0x200 {
        // 2001::/23, IETF protocol assignments: Teredo (2001::/32, a tunnel to an IPv4 host), benchmarking, ORCHID
        Some("an IETF protocol (Teredo, benchmarking, ORCHID) address")
    } else if s[0] & 0xfff0 == 0x3ff0 {
        Some("a documentation address")
    } else if s[0] == 0x64 && s[1] == 0xff9b {
        // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48)
        internal_v4(embedded)
    } else if s[0] == 0x2002 {
        // 6to4: the IPv4 address sits in bits 16..48
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        internal_v4(v4)
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("a documentation address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_table() {
        // (url, allowed when private targets are refused, status when refused)
        let table: &[(&str, Option<u16>)] = &[
            ("https://example.com/a?b", None),
            ("http://EXAMPLE.com.:80/", None),
            ("http://93.184.216.34/", None),
            ("http://[2606:4700::1111]/", None),
            ("ftp://example.com/", Some(400)),
            ("file:///etc/passwd", Some(400)),
            ("javascript:alert(1)", Some(400)),
            ("/relative", Some(400)),
            ("", Some(400)),
            ("http://user:pass@example.com/", Some(400)),
            ("http://user@example.com/", Some(400)),
            ("http://10.0.0.1/", Some(403)),
            ("http://127.0.0.1:8080/", Some(403)),
            ("http://0x7f.1/", Some(403)),
            ("http://2130706433/", Some(403)),
            ("http://169.254.169.254/latest/meta-data/", Some(403)),
            ("http://172.16.5.4/", Some(403)),
            ("http://192.168.1.1/", Some(403)),
            ("http://100.64.0.1/", Some(403)),
            ("http://0.0.0.0/", Some(403)),
            ("http://255.255.255.255/", Some(403)),
            ("http://[::1]/", Some(403)),
            ("http://[::]/", Some(403)),
            ("http://[fd00::1]/", Some(403)),
            ("http://[fe80::1]/", Some(403)),
            ("http://[::ffff:127.0.0.1]/", Some(403)),
            ("http://[::ffff:10.1.2.3]/", Some(403)),
            ("http://[64:ff9b::a00:1]/", Some(403)),
            ("http://[2002:a00:1::]/", Some(403)),
            ("http://[::ffff:0:127.0.0.1]/", Some(403)),
            ("http://[::ffff:0:10.0.0.1]/", Some(403)),
            ("http://[::ffff:0:93.184.216.34]/", None),
            ("http://[2001::1]/", Some(403)),
            ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", Some(403)),
            ("http://[2001:2::1]/", Some(403)),
            ("http://[2001:10::1]/", Some(403)),
            ("http://[2001:200::1]/", None),
            ("http://[100::1]/", Some(403)),
            ("http://[100::ffff:1]/", Some(403)),
            ("http://[3fff::1]/", Some(403)),
            ("http://[2001:db8::1]/", Some(403)),
            ("http://192.0.2.1/", Some(403)),
            ("http://198.51.100.7/", Some(403)),
            ("http://203.0.113.255/", Some(403)),
            ("http://192.88.99.1/", Some(403)),
            ("http://192.88.100.1/", None),
            ("http://203.0.114.1/", None),
            ("http://localhost:8787/", Some(403)),
            ("http://LOCALHOST./", Some(403)),
            ("http://api.localhost/", Some(403)),
            ("http://printer.local/", Some(403)),
            ("http://db.internal/", Some(403)),
            ("http://intranet/", Some(403)),
        ];
        for &(url, refused) in table {
            let got = check_target(url, false);
            match refused {
                None => assert!(got.is_ok(), "{url}: {got:?}"),
                Some(status) => assert_eq!(got.as_ref().map_err(|e| e.status()).err(), Some(status), "{url}: {got:?}"),
            }
        }
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(check_target(&long, true).unwrap_err().code, Refusal::UrlTooLong);
        assert_eq!(check_target(&long, true).unwrap_err().status(), 414);
    }

    #[test]
    fn private_targets_pass_when_allowed_but_bad_urls_never_do() {
        assert!(check_target("http://127.0.0.1:8080/x", true).is_ok());
        assert!(check_target("http://10.0.0.1/", true).is_ok());
        assert_eq!(check_target("ftp://127.0.0.1/", true).unwrap_err().status(), 400);
        assert_eq!(check_target("http://u:p@127.0.0.1/", true).unwrap_err().status(), 400);
    }

    #[test]
    fn spellings_of_one_host_name_one_object() {
        let keys: Vec<String> = ["http://EXAMPLE.com./a", "http://example.com:80/b", "HTTP://Example.COM/c?d"]
            .iter()
            .map(|u| check_target(u, false).unwrap().key.to_string())
            .collect();
        assert_eq!(keys, ["example.com", "example.com", "example.com"]);
        let t = check_target("https://Example.com.:8443/x", false).unwrap();
        assert_eq!(t.robots_url(), "https://example.com:8443/robots.txt");
    }

    #[test]
    fn messages_say_what_was_refused() {
        let e = check_target("ftp://example.com/", false).unwrap_err();
        assert!(e.message.contains("ftp"), "{e}");
        let e = check_target("http://user:hunter2@example.com/", false).unwrap_err();
        assert!(e.message.contains("credentials"), "{e}");
        assert!(!e.message.contains("hunter2"), "{e}");
        let e = check_target("http://10.0.0.1/", false).unwrap_err();
        assert!(e.message.contains("private"), "{e}");
        // the refusal names the switch that lifts it, and the local one
        assert!(e.message.contains("CRAWL_ALLOW_PRIVATE_TARGETS") && e.message.contains("--allow-local"), "{e}");
    }
}
