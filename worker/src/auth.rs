//! Bearer-token authentication, compared in constant time.

use crate::api::{ApiError, Refusal};

/// True when `a` and `b` are equal, in time that depends only on their lengths, never on where they differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let len = a.len().max(b.len());
    // a length difference is folded in as a difference, and every byte position is visited either way
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..len {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// The tokens configured in the `GATEWAY_TOKEN` secret: one token, or several separated by commas (for rotation);
/// blanks are dropped.
pub fn configured_tokens(secret: &str) -> Vec<String> {
    secret.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

/// Check an `Authorization` header against the configured tokens; returns the index of the matching token. Every
/// configured token is compared (no early exit), each in constant time.
pub fn authorize(header: Option<&str>, tokens: &[String]) -> Result<usize, ApiError> {
    if tokens.is_empty() {
        return Err(ApiError::new(Refusal::NotConfigured, "the gateway has no GATEWAY_TOKEN secret configured"));
    }
    let unauthorized = |m: &str| ApiError::new(Refusal::Unauthorized, m);
    let header = header.ok_or_else(|| unauthorized("missing Authorization header (expected: Bearer <token>)"))?;
    let (scheme, given) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(unauthorized("the Authorization header must use the Bearer scheme"));
    }
    let given = given.trim().as_bytes();
    let mut found = None;
    for (i, token) in tokens.iter().enumerate() {
        if constant_time_eq(given, token.as_bytes()) && found.is_none() {
            found = Some(i);
        }
    }
    found.ok_or_else(|| unauthorized("invalid token"))
}

/// A stable, non-reversible name for a token (FNV-1a 64, hex): the name of the Durable Object that counts the
/// hosts this token created, so the token itself never becomes an object name or a log field.
pub fn token_id(token: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in token.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("token-{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_is_equality() {
        let table: [(&[u8], &[u8], bool); 6] = [
            (b"", b"", true),
            (b"abc", b"abc", true),
            (b"abc", b"abd", false),
            (b"abc", b"ab", false),
            (b"ab", b"abc", false),
            (b"\0", b"", false),
        ];
        for (a, b, eq) in table {
            assert_eq!(constant_time_eq(a, b), eq, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn bearer_tokens_are_checked() {
        let tokens = configured_tokens("secret-1, secret-2 ,");
        assert_eq!(tokens, ["secret-1", "secret-2"]);
        assert_eq!(authorize(Some("Bearer secret-1"), &tokens), Ok(0));
        assert_eq!(authorize(Some("bearer  secret-2 "), &tokens), Ok(1));
        for bad in [None, Some(""), Some("Bearer"), Some("Bearer secret"), Some("Basic secret-1"), Some("secret-1")] {
            let e = authorize(bad, &tokens).unwrap_err();
            assert_eq!((e.status(), e.code), (401, Refusal::Unauthorized), "{bad:?}");
        }
        assert_eq!(authorize(Some("Bearer x"), &[]).unwrap_err().status(), 503);
        assert_eq!(authorize(Some("Bearer "), &configured_tokens("")).unwrap_err().status(), 503);
    }

    #[test]
    fn token_ids_are_stable_and_distinct() {
        assert_eq!(token_id("a"), token_id("a"));
        assert_ne!(token_id("a"), token_id("b"));
        assert!(!token_id("hunter2").contains("hunter2"));
    }
}
