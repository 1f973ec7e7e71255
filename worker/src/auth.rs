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

/// The token an `Authorization` header carries (`Bearer <token>`), or 401 `unauthorized` saying what is wrong.
fn bearer(header: Option<&str>) -> Result<&str, ApiError> {
    let unauthorized = |m: &str| ApiError::new(Refusal::Unauthorized, m);
    let header = header.ok_or_else(|| unauthorized("missing Authorization header (expected: Bearer <token>)"))?;
    let (scheme, given) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(unauthorized("the Authorization header must use the Bearer scheme"));
    }
    Ok(given.trim())
}

/// The index of the token in `tokens` equal to `given`: every token is compared (no early exit), each in constant
/// time.
fn find_token<'t>(given: &str, tokens: impl IntoIterator<Item = &'t str>) -> Option<usize> {
    let mut found = None;
    for (i, token) in tokens.into_iter().enumerate() {
        if constant_time_eq(given.as_bytes(), token.as_bytes()) && found.is_none() {
            found = Some(i);
        }
    }
    found
}

/// Check an `Authorization` header against the configured tokens; returns the index of the matching token. Every
/// configured token is compared (no early exit), each in constant time.
pub fn authorize(header: Option<&str>, tokens: &[String]) -> Result<usize, ApiError> {
    if tokens.is_empty() {
        return Err(ApiError::new(Refusal::NotConfigured, "the gateway has no GATEWAY_TOKEN secret configured"));
    }
    let given = bearer(header)?;
    find_token(given, tokens.iter().map(String::as_str))
        .ok_or_else(|| ApiError::new(Refusal::Unauthorized, "invalid token"))
}

/// An operator's token from the `GATEWAY_ADMIN_TOKEN` secret: the label that names its holder (in the log line of
/// each change it makes) and the token itself (never shown: its `Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken {
    /// Who holds it, as the log names them (`ops`, `alice`).
    pub label: String,
    /// The bearer token.
    pub token: String,
}

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminToken").field("label", &self.label).field("token", &"…").finish()
    }
}

/// The longest label of an admin token.
pub const MAX_ADMIN_LABEL: usize = 64;

/// The admin tokens of the `GATEWAY_ADMIN_TOKEN` secret: `label:token` entries separated by commas (several
/// operators, or one label twice while its token is rotated); blanks are dropped. A label is 1 to
/// [`MAX_ADMIN_LABEL`] ASCII letters, digits, `.`, `_` or `-`; the token is what follows the first colon. Every
/// problem is listed (an entry without a label, an empty token, a token that is also one of the tenants' `tenants`,
/// from `GATEWAY_TOKEN`), each naming its entry by position and label, never by its token. No entry: no admin
/// token (the admin routes are off).
pub fn configured_admin_tokens(secret: &str, tenants: &[String]) -> Result<Vec<AdminToken>, Vec<String>> {
    let mut admins = Vec::new();
    let mut problems = Vec::new();
    let entries = secret.split(',').map(str::trim).filter(|e| !e.is_empty());
    for (n, entry) in entries.enumerate().map(|(i, e)| (i + 1, e)) {
        let Some((label, token)) = entry.split_once(':') else {
            problems.push(format!("GATEWAY_ADMIN_TOKEN entry {n} has no label (expected label:token)"));
            continue;
        };
        let (label, token) = (label.trim(), token.trim());
        let label_ok = !label.is_empty()
            && label.len() <= MAX_ADMIN_LABEL
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !label_ok {
            problems.push(format!(
                "GATEWAY_ADMIN_TOKEN entry {n}: its label must be 1 to {MAX_ADMIN_LABEL} letters, digits, '.', '_' or \
                 '-' (expected label:token)"
            ));
            continue;
        }
        if token.is_empty() {
            problems.push(format!("GATEWAY_ADMIN_TOKEN entry {n} ({label}) has no token after its label"));
        } else if find_token(token, tenants.iter().map(String::as_str)).is_some() {
            problems.push(format!(
                "GATEWAY_ADMIN_TOKEN entry {n} ({label}) is also a tenant's token (GATEWAY_TOKEN): an admin token \
                 must be one of its own"
            ));
        } else {
            admins.push(AdminToken { label: label.to_owned(), token: token.to_owned() });
        }
    }
    if problems.is_empty() {
        Ok(admins)
    } else {
        Err(problems)
    }
}

/// Check an `Authorization` header on an admin route: the label of the admin token it carries. Every admin and
/// tenant token is compared, each in constant time. A tenant's token (one of `tenants`) is 403 `admin_only`; no
/// token, or one that is neither, 401 `unauthorized` (503 `not_configured` while no admin token is configured).
pub fn authorize_admin(header: Option<&str>, admins: &[AdminToken], tenants: &[String]) -> Result<String, ApiError> {
    let given = bearer(header)?;
    let admin = find_token(given, admins.iter().map(|a| a.token.as_str()));
    let tenant = find_token(given, tenants.iter().map(String::as_str));
    match (admin, tenant) {
        (Some(i), _) => Ok(admins[i].label.clone()),
        (None, Some(_)) => Err(ApiError::new(
            Refusal::AdminOnly,
            "this route changes or shows operators' rules: it takes an admin token (GATEWAY_ADMIN_TOKEN), not a \
             tenant's",
        )),
        (None, None) if admins.is_empty() => Err(ApiError::new(
            Refusal::NotConfigured,
            "the gateway has no GATEWAY_ADMIN_TOKEN secret configured: the admin routes are off",
        )),
        (None, None) => Err(ApiError::new(Refusal::Unauthorized, "invalid token")),
    }
}

/// A stable, non-reversible name for a token (FNV-1a 64, hex): the name of the Durable Object that counts the
/// hosts this token created, so the token itself never becomes an object name or a log field.
pub fn token_id(token: &str) -> String {
    use std::hash::Hasher as _;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(token.as_bytes());
    format!("token-{:016x}", hasher.finish())
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
    fn admin_tokens_are_labelled_and_never_a_tenants() {
        let tenants = configured_tokens("tenant-a,tenant-b");
        let admins = configured_admin_tokens(" ops:s3cret-1 , alice: s3cret:2 ,, ops:s3cret-3", &tenants).unwrap();
        let labels: Vec<(&str, &str)> = admins.iter().map(|a| (a.label.as_str(), a.token.as_str())).collect();
        assert_eq!(labels, [("ops", "s3cret-1"), ("alice", "s3cret:2"), ("ops", "s3cret-3")]);
        assert!(!format!("{admins:?}").contains("s3cret"), "Debug never shows a token");
        assert_eq!(configured_admin_tokens("", &tenants), Ok(vec![]));
        let problems = configured_admin_tokens("s3cret,:x,ops:,bad label:y,ops:tenant-b,ok:z", &tenants).unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:?}");
        for (problem, says) in problems.iter().zip([
            "entry 1 has no label",
            "entry 2: its label",
            "entry 3 (ops) has no token",
            "entry 4: its label",
            "entry 5 (ops) is also a tenant's",
        ]) {
            assert!(problem.contains(says), "{problem}");
        }
        assert!(!problems.join(" ").contains("s3cret") && !problems.join(" ").contains("tenant-b"));
    }

    #[test]
    fn an_admin_route_takes_an_admin_token_and_refuses_a_tenants() {
        let tenants = configured_tokens("tenant-a");
        let admins = configured_admin_tokens("ops:admin-1,alice:admin-2", &tenants).unwrap();
        assert_eq!(authorize_admin(Some("Bearer admin-2"), &admins, &tenants), Ok("alice".to_owned()));
        let code =
            |header, admins: &[AdminToken]| authorize_admin(header, admins, &tenants).map_err(|e| (e.status(), e.code));
        assert_eq!(code(Some("Bearer tenant-a"), &admins), Err((403, Refusal::AdminOnly)));
        assert_eq!(code(Some("Bearer tenant-a"), &[]), Err((403, Refusal::AdminOnly)));
        assert_eq!(code(None, &admins), Err((401, Refusal::Unauthorized)));
        assert_eq!(code(Some("Basic admin-1"), &admins), Err((401, Refusal::Unauthorized)));
        assert_eq!(code(Some("Bearer admin"), &admins), Err((401, Refusal::Unauthorized)));
        assert_eq!(code(Some("Bearer admin-1"), &[]), Err((503, Refusal::NotConfigured)));
        // an admin token is no tenant's: the tenants' routes refuse it
        assert_eq!(authorize(Some("Bearer admin-1"), &tenants).unwrap_err().code, Refusal::Unauthorized);
    }

    #[test]
    fn token_ids_are_stable_and_distinct() {
        assert_eq!(token_id("a"), token_id("a"));
        // FNV-1a 64 of "a": the name of a token's ledger stays what every earlier version made it
        assert_eq!(token_id("a"), "token-af63dc4c8601ec8c");
        assert_ne!(token_id("a"), token_id("b"));
        assert!(!token_id("hunter2").contains("hunter2"));
    }
}
