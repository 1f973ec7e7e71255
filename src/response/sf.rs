//! Structured Field Values (RFC 9651) Lists and Dictionaries, as far as rate-limit headers need them.
//!
//! Written by hand instead of using the `sfv` crate: that crate (with `base64`) was a tenth of the npm package's
//! wasm module, and these headers need only the parsing algorithm of RFC 9651 §4.2 (no serialization; Byte
//! Sequences and Display Strings are checked as that algorithm requires, then dropped). Every member parses to
//! its bare item and parameters; inner lists are parsed (so a field containing one stays valid) and kept without
//! their items. Any malformed item fails the whole field.

/// A bare item (RFC 9651 §3.3).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Bare<'a> {
    /// An Integer (at most 15 digits).
    Integer(i64),
    /// A Decimal (kept as text: rate-limit fields do not use them).
    Decimal,
    /// A String, unescaped.
    String(String),
    /// A Token.
    Token(&'a str),
    /// A Byte Sequence (checked, not decoded).
    Bytes,
    /// A Boolean.
    Boolean(bool),
    /// A Date (seconds since the epoch).
    Date(i64),
    /// A Display String (checked, not kept).
    DisplayString,
}

impl Bare<'_> {
    /// The Integer, if this is one.
    pub(crate) fn as_integer(&self) -> Option<i64> {
        match self {
            Bare::Integer(n) => Some(*n),
            _ => None,
        }
    }

    /// The text of a String or a Token.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self {
            Bare::String(s) => Some(s),
            Bare::Token(t) => Some(t),
            _ => None,
        }
    }
}

/// One member of a List or Dictionary.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member<'a> {
    /// The Dictionary key; empty for a List member.
    pub key: &'a str,
    /// The bare item; `None` for an inner list.
    pub value: Option<Bare<'a>>,
    /// Parameters in order (the last of a repeated key wins, see [`Member::param`]).
    pub params: Vec<(&'a str, Bare<'a>)>,
}

impl<'a> Member<'a> {
    /// Parameter `key`; the last one wins when repeated (RFC 9651 §4.2.3.2).
    pub(crate) fn param(&self, key: &str) -> Option<&Bare<'a>> {
        self.params.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// Parse a List field value.
pub(crate) fn parse_list(input: &str) -> Result<Vec<Member<'_>>, ()> {
    Parser { s: input, at: 0 }.members(false)
}

/// Parse a Dictionary field value.
pub(crate) fn parse_dictionary(input: &str) -> Result<Vec<Member<'_>>, ()> {
    Parser { s: input, at: 0 }.members(true)
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    fn skip(&mut self, set: &[u8]) {
        while self.peek().is_some_and(|b| set.contains(&b)) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn members(mut self, dictionary: bool) -> Result<Vec<Member<'a>>, ()> {
        let mut out = Vec::new();
        self.skip(b" ");
        if self.peek().is_none() {
            return Ok(out);
        }
        loop {
            let key = if dictionary { self.key()? } else { "" };
            let member = if dictionary && !self.eat(b'=') {
                Member { key, value: Some(Bare::Boolean(true)), params: self.params()? }
            } else if self.peek() == Some(b'(') {
                self.inner_list()?;
                Member { key, value: None, params: self.params()? }
            } else {
                let value = self.bare()?;
                Member { key, value: Some(value), params: self.params()? }
            };
            out.push(member);
            self.skip(b" \t");
            if self.peek().is_none() {
                return Ok(out);
            }
            if !self.eat(b',') {
                return Err(());
            }
            self.skip(b" \t");
            if self.peek().is_none() {
                return Err(()); // a trailing comma
            }
        }
    }

    fn inner_list(&mut self) -> Result<(), ()> {
        self.eat(b'(');
        loop {
            self.skip(b" ");
            if self.eat(b')') {
                return Ok(());
            }
            self.bare()?;
            self.params()?;
            if !matches!(self.peek(), Some(b' ' | b')')) {
                return Err(());
            }
        }
    }

    fn params(&mut self) -> Result<Vec<(&'a str, Bare<'a>)>, ()> {
        let mut out = Vec::new();
        while self.eat(b';') {
            self.skip(b" ");
            let key = self.key()?;
            let value = if self.eat(b'=') { self.bare()? } else { Bare::Boolean(true) };
            out.push((key, value));
        }
        Ok(out)
    }

    fn key(&mut self) -> Result<&'a str, ()> {
        let start = self.at;
        match self.peek() {
            Some(b) if b.is_ascii_lowercase() || b == b'*' => self.at += 1,
            _ => return Err(()),
        }
        while self.peek().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b)) {
            self.at += 1;
        }
        Ok(&self.s[start..self.at])
    }

    fn bare(&mut self) -> Result<Bare<'a>, ()> {
        match self.peek().ok_or(())? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => self.string(),
            b'*' | b'A'..=b'Z' | b'a'..=b'z' => {
                let start = self.at;
                self.at += 1;
                while self.peek().is_some_and(|b| is_tchar(b) || b == b':' || b == b'/') {
                    self.at += 1;
                }
                Ok(Bare::Token(&self.s[start..self.at]))
            }
            b':' => {
                self.at += 1;
                let start = self.at;
                while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)) {
                    self.at += 1;
                }
                let content = &self.s[start..self.at];
                if self.eat(b':') && is_base64(content) {
                    Ok(Bare::Bytes)
                } else {
                    Err(())
                }
            }
            b'?' => {
                self.at += 1;
                match self.peek() {
                    Some(b'1') => {
                        self.at += 1;
                        Ok(Bare::Boolean(true))
                    }
                    Some(b'0') => {
                        self.at += 1;
                        Ok(Bare::Boolean(false))
                    }
                    _ => Err(()),
                }
            }
            b'@' => {
                self.at += 1;
                match self.number()? {
                    Bare::Integer(n) => Ok(Bare::Date(n)),
                    _ => Err(()),
                }
            }
            b'%' => {
                self.at += 1;
                if self.eat(b'"') {
                    self.display_string()
                } else {
                    Err(())
                }
            }
            _ => Err(()),
        }
    }

    fn number(&mut self) -> Result<Bare<'a>, ()> {
        let negative = self.eat(b'-');
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        let int = &self.s[start..self.at];
        if int.is_empty() {
            return Err(());
        }
        if self.eat(b'.') {
            let frac_start = self.at;
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.at += 1;
            }
            let frac = self.at - frac_start;
            return if int.len() <= 12 && (1..=3).contains(&frac) { Ok(Bare::Decimal) } else { Err(()) };
        }
        if int.len() > 15 {
            return Err(());
        }
        let n: i64 = int.parse().map_err(|_| ())?;
        Ok(Bare::Integer(if negative { -n } else { n }))
    }

    fn string(&mut self) -> Result<Bare<'a>, ()> {
        self.eat(b'"');
        let mut out = String::new();
        loop {
            match self.peek().ok_or(())? {
                b'"' => {
                    self.at += 1;
                    return Ok(Bare::String(out));
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(c @ (b'"' | b'\\')) => {
                            out.push(char::from(c));
                            self.at += 1;
                        }
                        _ => return Err(()),
                    }
                }
                c @ 0x20..=0x7e => {
                    out.push(char::from(c));
                    self.at += 1;
                }
                _ => return Err(()),
            }
        }
    }

    /// The rest of a Display String after its `%"` (RFC 9651 §4.2.10): printable ASCII, where `%` and two
    /// lowercase hex digits stand for a byte, and the bytes must be UTF-8. A backslash is an ordinary character.
    fn display_string(&mut self) -> Result<Bare<'a>, ()> {
        let mut bytes = Vec::new();
        loop {
            match self.peek().ok_or(())? {
                b'"' => {
                    self.at += 1;
                    return std::str::from_utf8(&bytes).map(|_| Bare::DisplayString).map_err(|_| ());
                }
                b'%' => {
                    let hex = |at: usize| match self.s.as_bytes().get(at) {
                        Some(&d @ b'0'..=b'9') => Ok(d - b'0'),
                        Some(&d @ b'a'..=b'f') => Ok(d - b'a' + 10),
                        _ => Err(()),
                    };
                    bytes.push(hex(self.at + 1)? * 16 + hex(self.at + 2)?);
                    self.at += 3;
                }
                c @ 0x20..=0x7e => {
                    bytes.push(c);
                    self.at += 1;
                }
                _ => return Err(()),
            }
        }
    }
}

/// Whether the content of a Byte Sequence (base64 characters only) decodes (RFC 9651 §4.2.7): `=` only as the
/// one or two characters that pad it to a multiple of four. Missing padding is accepted, as the RFC asks.
fn is_base64(content: &str) -> bool {
    let data = content.trim_end_matches('=');
    let padding = content.len() - data.len();
    !data.contains('=') && data.len() % 4 != 1 && (padding == 0 || (padding <= 2 && content.len() % 4 == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_dictionaries_per_rfc_9651() {
        let list = parse_list(r#""burst";q=100;w=60, "daily";q=1000;w=86400"#).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].value, Some(Bare::String("burst".into())));
        assert_eq!(list[1].param("w"), Some(&Bare::Integer(86400)));
        let list = parse_list("tok;a;b=?0, (1 2);x=1, :aGk=:, @1700000000, %\"x\", 1.5, -7").unwrap();
        assert_eq!(list.len(), 7);
        assert_eq!(list[0].param("a"), Some(&Bare::Boolean(true)));
        assert_eq!(list[1].value, None);
        assert_eq!(list[3].value, Some(Bare::Date(1_700_000_000)));
        assert_eq!(list[6].value, Some(Bare::Integer(-7)));
        let dict = parse_dictionary("limit=100, remaining=50, reset=5, flag").unwrap();
        assert_eq!(dict.iter().map(|m| m.key).collect::<Vec<_>>(), ["limit", "remaining", "reset", "flag"]);
        assert_eq!(dict[3].value, Some(Bare::Boolean(true)));
        assert_eq!(parse_list(""), Ok(vec![]));
        assert_eq!(parse_list(r#""a\"b""#).unwrap()[0].value, Some(Bare::String("a\"b".into())));
    }

    #[test]
    fn display_strings_and_byte_sequences_per_rfc_9651() {
        let display = [
            r#"%"foo %22bar%22 \ baz""#,
            r#"%"f%c3%bc""#,
            r#"%"%e2%82%ac""#,
            r#"%"%f0%9f%98%80""#,
            r#"%"%f4%8f%bf%bf""#,
            r#"%"""#,
            r#"%"%25%7e""#,
            r#"%"\""#,
        ];
        let bytes = [":aGVsbG8=:", ":aGVsbG8:", ":aGVsbA==:", ":aGVsbA:", ":iZ==:", "::", ":+/+/:"];
        for (good, want) in
            display.iter().map(|d| (d, Bare::DisplayString)).chain(bytes.iter().map(|b| (b, Bare::Bytes)))
        {
            assert_eq!(parse_list(good).map(|m| m[0].value.clone()), Ok(Some(want)), "{good:?}");
        }
    }

    #[test]
    fn malformed_fields_are_errors() {
        for bad in [
            "a,",
            ",a",
            "a b",
            "\"open",
            "1234567890123456",
            "1.2345",
            "(1 2",
            ";q=1",
            "a;Q=1",
            "?2",
            "@x",
            ":ab",
            "\"\u{e9}\"",
            "a;q=",
            "1,,2",
            "\u{1F600}",
            "%foo\"",
            "%\"f%C3%BC\"",
            "%\"%g0\"",
            "%\"%\"",
            "%\"%2\"",
            "%\"%c3%28\"",
            "%\"%a0%a1\"",
            "%\"%c0%80\"",          // overlong
            "%\"%ed%a0%80\"",       // a surrogate
            "%\"%f4%90%80%80\"",    // past U+10FFFF
            "%\"%e2%82\"",          // cut short
            "%\"%e2%82x\"",         // cut short
            "%\"%f8%88%80%80%80\"", // five bytes
            "%\"a\\\"b\"",
            "%\"\u{e9}\"",
            ":=aGVsbG8=:",
            ":a=GVsbG8=:",
            ":aGVsbG8==:",
            ":aGVsbA=:",
            ":aGVsbG8=a:",
            ":a:",
            ":=:",
            ":aGVs====:",
            "a;d=%\"%g0\"",
            "(1 %\"%g0\")",
        ] {
            assert!(parse_list(bad).is_err(), "{bad:?}");
        }
        for bad in ["Limit=1", "a=", "a=1,", "=1"] {
            assert!(parse_dictionary(bad).is_err(), "{bad:?}");
        }
    }
}
