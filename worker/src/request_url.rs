//! The gateway's own request URL, read as the platform serialized it (`Request.url`, a WHATWG href): its query as
//! `application/x-www-form-urlencoded` pairs and its host name. Pure and allocation-light, so reading them costs
//! the Worker no URL crate (nor its IDNA tables) and no call into JavaScript; the unit tests hold them to the
//! `url` crate's answers (a WHATWG parser) for the same hrefs.

/// The query of the serialized URL `href` (after its first `?`, up to any `#`) as name–value pairs, in order,
/// decoded as the WHATWG `application/x-www-form-urlencoded` parser does: `&`-separated, an empty sequence
/// skipped, split at the first `=` (none: an empty value), `+` a space, percent-escapes decoded (a malformed one
/// kept as written), invalid UTF-8 replaced by U+FFFD.
pub fn query_pairs(href: &str) -> Vec<(String, String)> {
    // the fragment first: a `?` inside it starts no query
    let href = href.split_once('#').map_or(href, |(h, _)| h);
    let Some((_, query)) = href.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|sequence| !sequence.is_empty())
        .map(|sequence| {
            let (name, value) = sequence.split_once('=').unwrap_or((sequence, ""));
            (form_decoded(name), form_decoded(value))
        })
        .collect()
}

/// `text` with `+` as a space and its percent-escapes decoded, as UTF-8 (lossy).
fn form_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() && hex(bytes[i + 1]).is_some() && hex(bytes[i + 2]).is_some() => {
                let (hi, lo) = (hex(bytes[i + 1]).unwrap_or(0), hex(bytes[i + 2]).unwrap_or(0));
                out.push((hi << 4) | lo);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of a hexadecimal digit.
fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The host name of the serialized URL `href` (`http://127.0.0.1:8787/x` → `127.0.0.1`, an IPv6 address in
/// brackets), or `None` when it has no authority.
pub fn host_name(href: &str) -> Option<&str> {
    let (_, rest) = href.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => &host[..v6.find(']')? + 2],
        None => host.split_once(':').map_or(host, |(name, _)| name),
    };
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_reads_as_a_whatwg_parser_reads_it() {
        for href in [
            "http://127.0.0.1:8787/v1/fetch?url=http%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2",
            "https://gw.example/v1/fetch?url=https://example.com/a?b=1&c=2",
            "https://gw.example/v1/hosts?detail=1&limit=20",
            "https://gw.example/v1/hosts?limit=5&limit=7&&=x&y&a+b=c+d",
            "https://gw.example/v1/fetch?url=%zz%4%41%e2%82%ac%ff+%2B",
            "https://gw.example/v1/fetch?url=caf%C3%A9#fragment?x=1",
            "https://gw.example/v1/fetch",
            "https://gw.example/v1/fetch?",
            "https://gw.example/v1/fetch?url",
            "https://gw.example/v1/fetch?url==a=b",
            "https://gw.example/v1/fetch?%75rl=x",
            "https://gw.example/v1/fetch#a?url=x",
        ] {
            let expected: Vec<(String, String)> =
                url::Url::parse(href).unwrap().query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            assert_eq!(query_pairs(href), expected, "{href}");
        }
    }

    /// Any query of a few characters that matter to the form parser (and a fragment) reads as the `url` crate reads
    /// it: every sequence of up to 6 of them, after a fixed href.
    #[test]
    fn every_short_query_reads_as_a_whatwg_parser_reads_it() {
        let alphabet = ['a', '=', '&', '+', '%', '4', '1', '#', '?', 'é'];
        let mut checked = 0;
        let mut query = Vec::new();
        for len in 0..=6u32 {
            for mut n in 0..alphabet.len().pow(len) {
                query.clear();
                for _ in 0..len {
                    query.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                let href = format!("https://gw.example/v1/fetch?{}", query.iter().collect::<String>());
                let Ok(parsed) = url::Url::parse(&href) else { continue };
                // the platform hands the Worker its request URL serialized
                let href = String::from(parsed.clone());
                let expected: Vec<(String, String)> =
                    parsed.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
                assert_eq!(query_pairs(&href), expected, "{href}");
                checked += 1;
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    #[test]
    fn the_host_name_reads_as_a_whatwg_parser_reads_it() {
        for href in [
            "http://127.0.0.1:8787/healthz",
            "http://localhost:8787/v1/fetch?url=http://x/",
            "http://[::1]:8787/",
            "http://[::1]/",
            "https://hostpace-gateway.example.workers.dev/healthz",
            "https://crawl.example.com/?a=b:c@d",
            "http://user:pw@127.0.0.1:80/",
            "https://gw.example#f",
        ] {
            let expected = url::Url::parse(href).unwrap().host_str().map(str::to_owned);
            assert_eq!(host_name(href).map(str::to_owned), expected, "{href}");
        }
        assert_eq!(host_name("no-authority"), None);
    }
}
