//! Paths and rule patterns in one canonical spelling, and patterns matched against paths (RFC 9309 §2.2.2–2.2.3).
//!
//! Both sides of a comparison go through [`canonical`], so that two spellings of one path compare equal and two
//! paths compare different exactly when a server may treat them differently:
//!
//! - an unreserved character (`A–Z a–z 0–9 - . _ ~`) is compared decoded: `%7E` is `~`, `%62%61%7A` is `baz`;
//! - a reserved character (`: / ? # [ ] @ ! $ & ' ( ) * + , ; =`) is compared as written: `%2F` is not `/`,
//!   `%3A` is not `:` (RFC 3986 §2.2: encoding one changes what it means), except in a query (below);
//! - every other octet — beyond ASCII, controls, space, `" < > \ ^ ` { | }` and a `%` that starts no escape — is
//!   compared percent-encoded: `ツ` is `%E3%83%84`, a space is `%20`, a lone `%` is `%25`;
//! - escapes are written in upper case (`%e3` is `%E3`); letters elsewhere keep their case (paths are
//!   case-sensitive);
//! - in a query (after the text's first `?`), the reserved characters that mark nothing there — `: / ? @ '` —
//!   are compared decoded, as clients disagree on encoding them (a WHATWG parser sends `'` as `%27`, others
//!   encode `:` and `/`): `?u=https%3A%2F%2Fa.b` is `?u=https://a.b`, so a rule written either way matches a
//!   request sent either way, as in RFC 9309's table in §2.2.2. Decoding (not encoding) keeps a pattern's literal
//!   characters as they are wherever its wildcards put them: `/*/admin` still matches `/login?next=/admin`. The
//!   delimiters of a query's fields (`& = + ;` and the others) stay as written.
//!
//! In a pattern `*` (as written, not `%2A`) matches any run of characters, and a `$` that ends it anchors the end
//! of the path; a `$` elsewhere is a literal `$`.

use crate::host_key::parse_http_url;

/// `text` in the canonical spelling described in the [module documentation](self).
pub(crate) fn canonical(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_query = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escaped = match (b, bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) => hex(h).zip(hex(l)).map(|(h, l)| h << 4 | l),
            _ => None,
        };
        match escaped {
            Some(v) if is_unreserved(v) || (in_query && b":/?@'".contains(&v)) => out.push(char::from(v)),
            Some(v) => push_escape(&mut out, v),
            None if is_unreserved(b) || is_reserved(b) => {
                in_query |= b == b'?';
                out.push(char::from(b));
            }
            None => push_escape(&mut out, b),
        }
        i += if escaped.is_some() { 3 } else { 1 };
    }
    out
}

fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 15)]));
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    b":/?#[]@!$&'()*+,;=".contains(&b)
}

/// The path and query (no fragment) that a request for `url_or_path` asks for, in canonical spelling: an
/// absolute `http:`/`https:` URL as a WHATWG parser serializes it (dot segments removed, `\` read as `/`), or a
/// path starting with `/` read the same way. Text that does not parse (credentials in it, over 8 KiB, a bad
/// host) is read as a URL whose scheme (and `//`) may be missing — `example.com/a` asks for `/a` — with its dot
/// segments removed and `\` read as `/` too, so that nothing escapes matching by being malformed. Always starts
/// with `/`.
pub(crate) fn request_path(url_or_path: &str) -> String {
    let parsed = if url_or_path.starts_with('/') && !url_or_path.starts_with("//") {
        parse_http_url(&format!("http://robots.invalid{url_or_path}")).ok()
    } else {
        parse_http_url(url_or_path).ok()
    };
    let unparsed;
    let path = match &parsed {
        Some(url) => after_authority(&url.href),
        None => {
            // as a WHATWG parser reads it: no leading or trailing controls and spaces, no tabs or newlines, and
            // `\` a `/` before the query
            let text: String = url_or_path.trim_matches(|c: char| c <= ' ').replace(['\t', '\n', '\r'], "");
            let end = text.find(['?', '#']).unwrap_or(text.len());
            let slashed = text[..end].replace('\\', "/") + &text[end..];
            unparsed = without_dot_segments(after_authority(&slashed));
            &unparsed
        }
    };
    let path = path.split_once('#').map_or(path, |(p, _fragment)| p);
    let mut path = canonical(path);
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    path
}

/// What follows `scheme://authority` in `url`: the scheme ends at a `://` before any `/`, `?` or `#`, or the text
/// starts with `//` or `/` (a path alone); the path starts at the first `/`, `?` or `#` after that.
fn after_authority(url: &str) -> &str {
    if url.starts_with('/') && !url.starts_with("//") {
        return url;
    }
    let rest = url.strip_prefix("//").unwrap_or(url);
    let rest = match rest.find("://") {
        Some(at) if !rest[..at].contains(['/', '?', '#']) => &rest[at + 3..],
        _ => rest,
    };
    rest.find(['/', '?', '#']).map_or("", |at| &rest[at..])
}

/// `path` (and what follows it) with its `.` and `..` segments removed from the part before any `?` or `#`, as
/// RFC 3986 §5.2.4 and a WHATWG parser do (`%2e` is a dot too): `/a/./b/../c` is `/a/c`, `/a/..` is `/`.
fn without_dot_segments(path: &str) -> String {
    let end = path.find(['?', '#']).unwrap_or(path.len());
    let (path, rest) = path.split_at(end);
    let dots = |segment: &str| match segment.to_ascii_lowercase().as_str() {
        "." | "%2e" => Some(1),
        ".." | ".%2e" | "%2e." | "%2e%2e" => Some(2),
        _ => None,
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut segments = path.split('/').skip(1).peekable();
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        match dots(segment) {
            Some(n) => {
                if n == 2 {
                    kept.pop();
                }
                if last {
                    kept.push(""); // `/a/..` ends in a slash: `/`
                }
            }
            None => kept.push(segment),
        }
    }
    let mut out = String::with_capacity(path.len() + rest.len());
    for segment in kept {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() && !path.is_empty() {
        out.push('/');
    }
    out.push_str(rest);
    out
}

/// A rule's path pattern, read once: its literal pieces between `*`s, and whether it ends in `$`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The pattern in canonical spelling, `$` included: its length is the rule's priority.
    text: String,
    /// A `$` ended the pattern: the path must end where the last literal run does.
    anchored: bool,
}

impl Pattern {
    /// `pattern` (as written in a rule, non-empty) compiled.
    pub(crate) fn new(pattern: &str) -> Pattern {
        let text = canonical(pattern);
        let anchored = text.ends_with('$');
        Pattern { text, anchored }
    }

    /// The pattern's length in octets (canonical spelling): the longer of two matching rules decides.
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// The literal runs between wildcards (the `$` left out): the first must start the path.
    fn pieces(&self) -> std::str::Split<'_, char> {
        let body = if self.anchored { &self.text[..self.text.len() - 1] } else { &self.text };
        body.split('*')
    }

    /// The literal text the pattern starts with, up to its first `*` (all of it without one).
    pub(crate) fn head(&self) -> &str {
        self.pieces().next().unwrap_or_default()
    }

    /// Whether the pattern matches `path` (canonical spelling) from its start.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let mut pieces = self.pieces();
        let Some(mut left) = path.strip_prefix(pieces.next().unwrap_or_default()) else { return false };
        // Each piece but the last at its leftmost place leaves the most room for the ones after it.
        let mut last = None;
        for piece in pieces {
            if let Some(before) = last.replace(piece) {
                match left.find(before) {
                    Some(at) => left = &left[at + before.len()..],
                    None => return false,
                }
            }
        }
        match last {
            None => !self.anchored || left.is_empty(),
            Some(last) if self.anchored => left.ends_with(last),
            Some(last) => left.contains(last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn canonical_spellings() {
        let cases = [
            ("/foo/bar", "/foo/bar"),
            ("/foo/%62%61%7A", "/foo/baz"),
            ("/%7e%7E~", "/~~~"),
            ("/a%2Fb", "/a%2Fb"),
            ("/a%2fb", "/a%2Fb"),
            ("/a%3a", "/a%3A"),
            ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
            ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),
            ("/a b", "/a%20b"),
            ("/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https://foo.bar"),
            ("/foo/bar?baz=https%3a%2f%2ffoo.bar", "/foo/bar?baz=https://foo.bar"),
            ("/a%3Ab%2Fc?e=%27f%27%3Fg%40", "/a%3Ab%2Fc?e='f'?g@"),
            ("/a?b=c&d=e;f+g%26h", "/a?b=c&d=e;f+g%26h"),
            ("/a%20b", "/a%20b"),
            ("/\"<>\\^`{|}", "/%22%3C%3E%5C%5E%60%7B%7C%7D"),
            ("/100%", "/100%25"),
            ("/100%25", "/100%25"),
            ("/%zz", "/%25zz"),
            ("/%4", "/%254"),
            ("/q?a=b&c=https://x.y", "/q?a=b&c=https://x.y"),
            ("/*$", "/*$"),
            ("/%2A", "/%2A"),
            ("/Case", "/Case"),
            ("", ""),
        ];
        for (text, want) in cases {
            assert_eq!(canonical(text), want, "{text:?}");
        }
    }

    #[test]
    fn request_paths() {
        let cases = [
            ("https://example.com/a/b?c=d#frag", "/a/b?c=d"),
            ("https://example.com", "/"),
            ("https://example.com?q", "/?q"),
            ("https://example.com/a/../private", "/private"),
            ("https://example.com/a/./b", "/a/b"),
            ("https://example.com\\a\\b", "/a/b"),
            ("https://example.com/ツ", "/%E3%83%84"),
            ("https://example.com/%7Euser", "/~user"),
            ("/a/b?c", "/a/b?c"),
            ("/a/../b", "/b"),
            ("/", "/"),
            ("", "/"),
            ("ftp://example.com/x", "/x"),
            // not a URL the parser reads: a missing scheme or `//` is read as the authority's
            ("example.com", "/"),
            ("example.com/a", "/a"),
            ("a/b", "/b"),
            ("//example.com/a?b", "/a?b"),
            ("http://[::1/x#y", "/x"),
            ("example.com#x/y", "/"),
            // not read by the parser (credentials, too long), normalised the same way
            ("https://user:pw@example.com/a/../private", "/private"),
            ("https://user@example.com\\a\\.\\b?c\\d", "/a/b?c%5Cd"),
            ("https://user@example.com/a/%2e%2E/b/.", "/b/"),
            ("https://user@example.com/a/..", "/"),
            ("https://user@example.com/../../x/..?q=/../", "/?q=/../"),
            (" https://user@example.com/pri\tva\nte/.\r./x ", "/x"),
        ];
        for (input, want) in cases {
            assert_eq!(request_path(input), want, "{input:?}");
        }
        let long = format!("https://example.com/{}/../private/./x", "a".repeat(crate::host_key::MAX_URL_LEN));
        assert_eq!(request_path(&long), "/private/x", "a URL over the parser's limit");
    }

    #[test]
    fn pattern_matching() {
        let cases: &[(&str, &str, bool)] = &[
            ("/fish", "/fish", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/fish/salmon.html", true),
            ("/fish", "/Fish.asp", false),
            ("/fish", "/catfish", false),
            ("/fish*", "/fishheads", true),
            ("/fish/", "/fish", false),
            ("/*.php", "/index.php", true),
            ("/*.php", "/filename.php/", true),
            ("/*.php", "/folder/filename.php?parameters", true),
            ("/*.php", "/", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?parameters", false),
            ("/*.php$", "/filename.php5", false),
            ("/fish*.php", "/fish.php", true),
            ("/fish*.php", "/fishheads/catfish.php?p", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/$", "/", true),
            ("/$", "/a", false),
            ("*", "/anything", true),
            ("/a*b*c$", "/a-b-c", true),
            ("/a*b*c$", "/a-b-c-c", true),
            ("/a*b*c$", "/a-b-c-d", false),
            ("/a*c$", "/abcbc", true),
            ("/a$b", "/a$b", true),
            ("/a$b", "/a", false),
            ("/**", "/", true),
            ("/x*$", "/x", true),
            ("/%7Ea", "/~a", true),
            ("/a%2Fb", "/a/b", false),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(Pattern::new(pattern).matches(&canonical(path)), *want, "{pattern:?} on {path:?}");
        }
    }
}
