//! Reading host keys from URLs and host names: a WHATWG URL parser (the `url` crate natively, the platform's
//! `URL` in WebAssembly), and a plainly spelled origin read without it.

use super::HostKey;
use crate::error::{clip, Error, Quoted};

/// The longest URL accepted, in bytes (as many servers refuse longer request lines).
pub const MAX_URL_LEN: usize = 8192;

/// The longest host name accepted, in bytes, in its ASCII form (a DNS name has at most 253).
pub const MAX_HOST_LEN: usize = 253;

/// An absolute `http:`/`https:` URL as a WHATWG parser read it, reduced to what pacing and target checks need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// The host as serialized by the parser (lowercase, punycode, IPv6 in brackets; a trailing dot kept).
    pub host: String,
    /// The port when it is not the scheme's default.
    pub port: Option<u16>,
    /// The whole URL, serialized by the parser.
    pub href: String,
}

#[cfg(not(target_arch = "wasm32"))]
fn whatwg_parse(input: &str) -> Result<HttpUrl, String> {
    let url = url::Url::parse(input).map_err(|e| e.to_string())?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in the URL are not accepted".into());
    }
    Ok(HttpUrl {
        scheme: url.scheme().to_owned(),
        host: url.host_str().unwrap_or_default().to_owned(),
        port: url.port(),
        href: url.into(),
    })
}

#[cfg(target_arch = "wasm32")]
mod platform {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(inline_js = r#"
// The parts as a plain object of strings made here (so reading them runs no code of anyone's and cannot throw),
// or undefined when the parser refuses the input; nothing thrown reaches the Rust frames that asked.
export function parse_url(input) {
  try {
    const u = new URL(input);
    const parts = { protocol: u.protocol, username: u.username, password: u.password, port: u.port,
      hostname: u.hostname, href: u.href };
    for (const k in parts) if (typeof parts[k] !== 'string') return undefined;
    return parts;
  } catch (_) {
    return undefined;
  }
}
"#)]
    extern "C" {
        /// A URL parsed by the platform's WHATWG `URL`: its parts, as strings.
        pub type Url;
        /// `new URL(input)`'s parts, or `None` when the platform's parser refuses it.
        pub fn parse_url(input: &str) -> Option<Url>;
        /// `url.protocol` (`https:`).
        #[wasm_bindgen(method, getter)]
        pub fn protocol(this: &Url) -> String;
        /// `url.username`.
        #[wasm_bindgen(method, getter)]
        pub fn username(this: &Url) -> String;
        /// `url.password`.
        #[wasm_bindgen(method, getter)]
        pub fn password(this: &Url) -> String;
        /// `url.port` (empty for the scheme's default).
        #[wasm_bindgen(method, getter)]
        pub fn port(this: &Url) -> String;
        /// `url.hostname`.
        #[wasm_bindgen(method, getter)]
        pub fn hostname(this: &Url) -> String;
        /// `url.href`, the URL as the parser writes it.
        #[wasm_bindgen(method, getter)]
        pub fn href(this: &Url) -> String;
    }
}

#[cfg(target_arch = "wasm32")]
fn whatwg_parse(input: &str) -> Result<HttpUrl, String> {
    let url = platform::parse_url(input).ok_or("invalid URL (the platform's URL parser refused it)")?;
    if !url.username().is_empty() || !url.password().is_empty() {
        return Err("credentials in the URL are not accepted".into());
    }
    let port = url.port();
    Ok(HttpUrl {
        scheme: url.protocol().trim_end_matches(':').to_owned(),
        host: url.hostname(),
        port: if port.is_empty() { None } else { port.parse().ok() },
        href: url.href(),
    })
}

/// Parse an absolute URL and require `http:` or `https:`, a host, no credentials and a bounded length.
pub fn parse_http_url(input: &str) -> Result<HttpUrl, Error> {
    let bad = |reason: String| Error::InvalidUrl { input: clip(input), reason };
    if input.len() > MAX_URL_LEN {
        return Err(bad(format!("longer than {MAX_URL_LEN} bytes")));
    }
    let url = whatwg_parse(input).map_err(bad)?;
    if !matches!(url.scheme.as_str(), "http" | "https") {
        return Err(bad(format!("scheme {} is not http or https", Quoted(&url.scheme))));
    }
    Ok(url)
}

impl HostKey {
    /// The key of an absolute `http:` or `https:` URL.
    pub fn from_url(input: &str) -> Result<HostKey, Error> {
        // a plainly spelled origin parses to itself: its key is read without the parser (see [`plain_origin_key`])
        if let Some(key) = plain_origin(input).filter(|_| input.len() <= MAX_URL_LEN).and_then(plain_origin_key) {
            return Ok(key);
        }
        HostKey::from_parsed_url(input)
    }

    /// [`HostKey::from_url`] by the parser alone.
    pub(super) fn from_parsed_url(input: &str) -> Result<HostKey, Error> {
        let url = parse_http_url(input)?;
        HostKey::of(&url, input)
    }

    /// The key of a parsed URL.
    pub fn of(url: &HttpUrl, input: &str) -> Result<HostKey, Error> {
        let host = url.host.strip_suffix('.').unwrap_or(&url.host);
        if host.is_empty() || host.ends_with('.') {
            return Err(Error::InvalidUrl { input: clip(input), reason: "the host name is empty".into() });
        }
        if host.len() > MAX_HOST_LEN {
            return Err(Error::InvalidUrl {
                input: clip(input),
                reason: format!("the host name is longer than {MAX_HOST_LEN} bytes"),
            });
        }
        // What a WHATWG parser leaves is a lowercase ASCII domain, an IPv4 address or a bracketed IPv6 address.
        // Platforms differ at the edges (Chromium percent-encodes a space in a host where the standard refuses
        // it), so anything else is refused here, the same way on every platform.
        let ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) => v6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.'),
            None => host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b)),
        };
        if !ok {
            return Err(Error::InvalidUrl {
                input: clip(input),
                reason: format!("invalid host {} (expected a domain name or an IP address)", Quoted(host)),
            });
        }
        Ok(match url.port {
            Some(port) => HostKey::from_normalized(&format!("{host}:{port}")),
            None => HostKey::from_normalized(host),
        })
    }

    /// The key of a bare host, optionally with a port (`Example.com.`, `example.com:8080`, `[::1]:80`, `bücher.de`),
    /// read as the host of an `http:` URL: port 80 is the default and dropped, any other port is kept. Every
    /// key's own text parses back to the same key.
    pub fn parse(host: &str) -> Result<HostKey, Error> {
        if host.is_empty() || host.len() > 1024 || host.contains(['/', '?', '#', '@', '\\']) {
            return Err(Error::InvalidUrl {
                input: clip(host),
                reason: "not a host name (with an optional port)".into(),
            });
        }
        // a host spelled the way the parser leaves it is its own key (see [`plain_origin_key`])
        if let Some(key) = plain_authority_key(host, 80) {
            return Ok(key);
        }
        HostKey::parse_parsed(host)
    }

    /// [`HostKey::parse`] of a host that passed its first checks, by the parser alone.
    fn parse_parsed(host: &str) -> Result<HostKey, Error> {
        let url = parse_http_url(&format!("http://{host}/"))
            .map_err(|e| Error::InvalidUrl { input: clip(host), reason: e.to_string() })?;
        HostKey::of(&url, host)
    }
}

impl TryFrom<String> for HostKey {
    type Error = Error;
    fn try_from(s: String) -> Result<HostKey, Error> {
        HostKey::parse(&s)
    }
}

/// The literal `http://authority` or `https://authority` prefix of a URL, when it is spelled plainly (lowercase
/// scheme, an authority without backslashes, spaces or control characters): two URLs with the same such prefix
/// always have the same host key, so the key can be cached by it.
pub(crate) fn plain_origin(url: &str) -> Option<&str> {
    let start = if url.starts_with("http://") {
        7
    } else if url.starts_with("https://") {
        8
    } else {
        return None;
    };
    let bytes = url.as_bytes();
    let mut end = start;
    while let Some(&b) = bytes.get(end) {
        match b {
            b'/' | b'?' | b'#' => break,
            b'\\' | 0..=0x20 | 0x7f.. => return None,
            _ => end += 1,
        }
    }
    (end > start).then(|| &url[..end])
}

/// The host key of a plain origin (see [`plain_origin`]) whose host is spelled the way a WHATWG parser would
/// leave it — non-empty labels of lowercase ASCII letters, digits and hyphens, none starting with `xn--`, the
/// last starting with a letter (a last label that is a number makes the parser read an IPv4 address) — with an
/// optional port of at most five digits: such a host parses to itself, so the key is read without the parser
/// (in wasm, a round trip to the platform's `URL` that costs more than the rest of a new host's bookkeeping).
/// `None` for anything else, which goes to the parser.
pub(super) fn plain_origin_key(origin: &str) -> Option<HostKey> {
    match origin.strip_prefix("http://") {
        Some(authority) => plain_authority_key(authority, 80),
        None => plain_authority_key(origin.strip_prefix("https://")?, 443),
    }
}

/// [`plain_origin_key`] of the authority (host and optional port) of an origin whose scheme's default port is
/// `default_port`.
fn plain_authority_key(authority: &str, default_port: u32) -> Option<HostKey> {
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, p),
        None => (authority, ""),
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.len() > MAX_HOST_LEN || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut first = 0;
    for label in host.split('.') {
        let bytes = label.as_bytes();
        first = *bytes.first()?;
        if label.starts_with("xn--")
            || !bytes.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return None;
        }
    }
    if !first.is_ascii_lowercase() {
        return None;
    }
    let number = if port.is_empty() { default_port } else { crate::response::digits(port)? };
    Some(match number {
        n if n == default_port => HostKey::from_normalized(host),
        n if n <= 65535 => {
            // the port as the parser writes it: without leading zeros
            let digits = port.trim_start_matches('0');
            let mut key = String::with_capacity(host.len() + 6);
            key.push_str(host);
            key.push(':');
            key.push_str(if digits.is_empty() { "0" } else { digits });
            HostKey::from_normalized(&key)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn spellings_of_one_host_share_a_key() {
        let table = [
            ("http://example.com/", "example.com"),
            ("HTTP://EXAMPLE.com./a?b", "example.com"),
            ("http://example.com:80/", "example.com"),
            ("https://example.com:443/x", "example.com"),
            ("https://example.com:8443/", "example.com:8443"),
            ("http://example.com:443/", "example.com:443"),
            ("http://bücher.de/", "xn--bcher-kva.de"),
            ("http://XN--BCHER-KVA.de/", "xn--bcher-kva.de"),
            ("http://[::1]:8080/", "[::1]:8080"),
            ("http://127.0.0.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://ex%41mple.com/", "example.com"),
        ];
        for (url, key) in table {
            assert_eq!(HostKey::from_url(url).map(|k| k.to_string()), Ok(key.to_string()), "{url}");
        }
    }

    #[test]
    fn bare_hosts_normalize_the_same_way() {
        let table = [
            ("EXAMPLE.com.", "example.com"),
            ("example.com:80", "example.com"),
            ("example.com:443", "example.com:443"),
            ("example.com:8080", "example.com:8080"),
            ("Bücher.DE", "xn--bcher-kva.de"),
            ("[::1]", "[::1]"),
        ];
        for (host, key) in table {
            assert_eq!(HostKey::parse(host).map(|k| k.to_string()), Ok(key.to_string()), "{host}");
        }
    }

    #[test]
    fn host_names_longer_than_dns_allows_are_refused_whatever_their_spelling() {
        // found by fuzzing: 150 bytes of UTF-8 became a 270-byte punycode key that its own text could not parse
        let long_unicode = format!("http://b\u{fc}g{}.de/", "w".repeat(260));
        assert!(HostKey::from_url(&long_unicode).unwrap_err().to_string().contains("longer than 253"));
        let ok = format!("http://{}.example/", "a".repeat(60));
        let key = HostKey::from_url(&ok).unwrap();
        assert_eq!(HostKey::parse(key.as_str()), Ok(key));
    }

    /// The plain path agrees with the parser wherever it answers, and answers for most plain hosts.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn plain_origins_read_without_the_parser_give_the_parsers_key() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut answered = 0;
        let mut runner = proptest::test_runner::TestRunner::default();
        let origins = "https?://((xn--|0x|[0-9-]{1,3}|[a-z][a-z0-9-]{0,4}){1,2}[.]?){1,4}(:[0-9]{0,6})?";
        for _ in 0..4000 {
            let origin = origins.new_tree(&mut runner).map(|t| t.current());
            let Ok(origin) = origin else { continue };
            let Some(plain) = plain_origin(&format!("{origin}/")).map(str::to_owned) else { continue };
            if let Some(key) = plain_origin_key(&plain) {
                answered += 1;
                assert_eq!(Ok(key), HostKey::from_parsed_url(&format!("{origin}/x")), "{origin}");
            }
            // from_url and parse, which take the plain path first, give what the parser gives, errors included
            let url = format!("{origin}/x");
            assert_eq!(HostKey::from_url(&url), HostKey::from_parsed_url(&url), "{url}");
            if let Some(authority) = origin.strip_prefix("http://") {
                let parsed = HostKey::parse_parsed(authority).map_err(|e| e.to_string());
                assert_eq!(HostKey::parse(authority).map_err(|e| e.to_string()), parsed, "{authority}");
            }
        }
        assert!(answered > 400, "the plain path answered only {answered} times");
    }

    #[test]
    fn every_key_parses_back_to_itself() {
        for url in ["http://example.com:443/", "https://example.com/", "http://[::1]:80/", "http://bücher.de:8080/"] {
            let key = HostKey::from_url(url).unwrap();
            assert_eq!(HostKey::parse(key.as_str()), Ok(key), "{url}");
        }
    }

    #[test]
    fn bad_urls_are_errors_with_reasons() {
        let table = [
            ("", "relative URL"),
            ("example.com/path", "relative URL"),
            ("ftp://example.com/", "not http or https"),
            ("file:///etc/passwd", "not http or https"),
            ("http://user:pw@example.com/", "credentials"),
            ("http://exa mple.com/", "invalid"),
            ("http://./", "empty"),
            ("http://[::1/", "invalid"),
        ];
        for (url, reason) in table {
            let err = HostKey::from_url(url).expect_err(url);
            // the platform's parser (wasm) words its refusals differently: only the refusal is checked there
            if cfg!(not(target_arch = "wasm32")) || !reason.contains("relative") && reason != "invalid" {
                assert!(err.to_string().contains(reason), "{url}: {err}");
            }
        }
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(HostKey::from_url(&long).unwrap_err().to_string().contains("longer than"));
        for bad in ["", "a/b", "user@host", "a b", "host:99999"] {
            assert!(HostKey::parse(bad).is_err(), "{bad}");
        }
    }
}
