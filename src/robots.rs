//! robots.txt `Crawl-delay` for one crawler, with RFC 9309 group matching.
//!
//! Only what pacing needs is parsed: groups and the (non-standard, widely used) `Crawl-delay` line. Allow/Disallow
//! matching is not done here. The parser is hand-written rather than taken from a crate: the maintained candidate,
//! `texting_robots` 0.2.2, pulls in `regex`, `nom`, `bstr`, `url`, `anyhow`, `thiserror` and `lazy_static`;
//! `regex` alone would blow the wasm module's 50 KB gzipped budget for a job that is a line splitter and a
//! token comparison.
//!
//! The rules, all in [`crawl_delay`]:
//!
//! - The crawler is known by its product token ([`product_token`]): `hostpace` for
//!   `hostpace/0.1 (+https://example.com/bot)`.
//! - A group is one or more `User-agent` lines followed by its other lines. `User-agent` lines in a row (blank
//!   lines, comments and `Sitemap` lines between them do not count) share one group; any other `key: value` line
//!   ends the run, so the next `User-agent` starts a new group.
//! - A group matches when one of its `User-agent` values, read up to its first character that cannot be in a
//!   product token (`hostpace/2.0` reads as `hostpace`), equals the crawler's token ignoring case. No prefix
//!   matching: `hostpacebot` is another crawler.
//! - Every matching group counts (they are combined). When none matches, the `*` groups apply instead — a group
//!   that names the crawler without a `Crawl-delay` means no delay, not the `*` one.
//! - Of several `Crawl-delay` values that apply, the largest wins (the most polite reading).
//! - `Crawl-delay` is seconds: `2`, or fractional `0.5` (rounded up to whole milliseconds). Negative, `NaN`,
//!   exponent or other garbage values are ignored. Huge values saturate at [`Duration::MAX`]: the caller caps them.
//! - Keys are case-insensitive and accept `_` for `-` or no separator (`user_agent`, `crawldelay`); the key and
//!   value must be separated by `:`. `#` starts a comment. LF, CRLF and CR line ends and a leading byte-order mark
//!   are accepted; unknown lines are ignored.
//! - Only the first [`MAX_ROBOTS_BYTES`] are read (RFC 9309 §2.5 lets a crawler stop there); a line cut by that
//!   limit is dropped.

use crate::response::{parse_seconds, Seconds};
use std::time::Duration;

/// How much of a robots.txt is read: 500 KiB, the least RFC 9309 §2.5 requires a crawler to parse.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The `Crawl-delay` that `robots_txt` sets for the crawler `user_agent` (its full User-Agent, or just its product
/// token), or `None` when no applicable group sets one. The rules are in the [module documentation](self).
///
/// ```
/// use hostpace::robots::crawl_delay;
/// use std::time::Duration;
///
/// let robots = "User-agent: *\nCrawl-delay: 10\n\nUser-agent: hostpace\nCrawl-delay: 0.5\n";
/// assert_eq!(crawl_delay(robots, "hostpace/0.1 (+https://example.com/bot)"), Some(Duration::from_millis(500)));
/// assert_eq!(crawl_delay(robots, "otherbot/1.0"), Some(Duration::from_secs(10)));
/// ```
pub fn crawl_delay(robots_txt: &str, user_agent: &str) -> Option<Duration> {
    let token = product_token(user_agent);
    let mut in_agent_run = false;
    let (mut group_is_ours, mut group_is_global) = (false, false);
    let mut ours_seen = false;
    let (mut ours, mut global): (Option<Duration>, Option<Duration>) = (None, None);

    for line in bounded(robots_txt).split(['\n', '\r']) {
        let line = line.split_once('#').map_or(line, |(content, _comment)| content);
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match Key::of(key.trim()) {
            Key::UserAgent => {
                if !in_agent_run {
                    (in_agent_run, group_is_ours, group_is_global) = (true, false, false);
                }
                if value.split_whitespace().next() == Some("*") {
                    group_is_global = true;
                } else if !token.is_empty() && product_token(value).eq_ignore_ascii_case(token) {
                    group_is_ours = true;
                    ours_seen = true;
                }
            }
            Key::CrawlDelay => {
                in_agent_run = false;
                if let Some(Seconds::NonNegative(delay)) = parse_seconds(value) {
                    if group_is_ours {
                        ours = ours.max(Some(delay));
                    }
                    if group_is_global {
                        global = global.max(Some(delay));
                    }
                }
            }
            Key::Sitemap => {}
            Key::Other => in_agent_run = false,
        }
    }
    if ours_seen {
        ours
    } else {
        global
    }
}

/// The product token of a User-Agent: its leading run of letters, `_` and `-` (the characters RFC 9309 §2.2.1
/// allows), which ends at the `/` before a version or at a space. Empty when the agent starts otherwise.
///
/// ```
/// use hostpace::robots::product_token;
///
/// assert_eq!(product_token("hostpace/0.1 (+https://example.com/bot)"), "hostpace");
/// assert_eq!(product_token("Example-Bot"), "Example-Bot");
/// ```
pub fn product_token(user_agent: &str) -> &str {
    let agent = user_agent.trim_start();
    let end = agent.find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '-')).unwrap_or(agent.len());
    &agent[..end]
}

/// The keys that matter for `Crawl-delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    UserAgent,
    CrawlDelay,
    /// Not part of any group (RFC 9309 §2.3.5): does not end a run of `User-agent` lines.
    Sitemap,
    /// Allow, Disallow and anything else: a line of the current group.
    Other,
}

impl Key {
    fn of(key: &str) -> Key {
        let is = |words: [&str; 2]| {
            let Some(rest) = strip_prefix_ignore_case(key, words[0]) else { return false };
            let rest = rest.strip_prefix(['-', '_']).unwrap_or(rest);
            rest.eq_ignore_ascii_case(words[1])
        };
        if is(["user", "agent"]) {
            Key::UserAgent
        } else if is(["crawl", "delay"]) {
            Key::CrawlDelay
        } else if key.eq_ignore_ascii_case("sitemap") {
            Key::Sitemap
        } else {
            Key::Other
        }
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// `robots_txt` without a leading byte-order mark, cut to [`MAX_ROBOTS_BYTES`] at the end of a whole line.
fn bounded(robots_txt: &str) -> &str {
    let text = robots_txt.strip_prefix('\u{feff}').unwrap_or(robots_txt);
    if text.len() <= MAX_ROBOTS_BYTES {
        return text;
    }
    let mut end = MAX_ROBOTS_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    if matches!(text.as_bytes().get(end), Some(b'\n' | b'\r')) {
        return head;
    }
    head.rfind(['\n', '\r']).map_or("", |cut| &head[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "hostpace/0.1 (+https://example.com/bot)";

    fn secs(n: u64) -> Option<Duration> {
        Some(Duration::from_secs(n))
    }

    #[test]
    fn crawl_delay_for_our_groups() {
        let cases: &[(&str, &str, Option<Duration>)] = &[
            // Which group applies.
            ("star fallback", "User-agent: *\nCrawl-delay: 5\n", secs(5)),
            (
                "our group wins over star",
                "User-agent: *\nCrawl-delay: 5\n\nUser-agent: hostpace\nCrawl-delay: 2\n",
                secs(2),
            ),
            (
                "our group wins over star whatever the order",
                "User-agent: hostpace\nCrawl-delay: 2\n\nUser-agent: *\nCrawl-delay: 5\n",
                secs(2),
            ),
            (
                "our group without a delay does not inherit star's",
                "User-agent: *\nCrawl-delay: 5\n\nUser-agent: hostpace\nDisallow: /private\n",
                None,
            ),
            (
                "other crawlers' groups do not apply",
                "User-agent: otherbot\nCrawl-delay: 9\n\nUser-agent: *\nCrawl-delay: 1\n",
                secs(1),
            ),
            ("no star and no match", "User-agent: otherbot\nCrawl-delay: 9\n", None),
            (
                "matching groups are combined",
                "User-agent: hostpace\nDisallow: /a\n\nUser-agent: otherbot\nCrawl-delay: 9\n\n\
                 User-agent: hostpace\nCrawl-delay: 3\n",
                secs(3),
            ),
            (
                "the largest delay of combined groups wins",
                "User-agent: hostpace\nCrawl-delay: 3\n\nUser-agent: hostpace\nCrawl-delay: 4\nCrawl-delay: 1\n",
                secs(4),
            ),
            (
                "star groups are combined too",
                "User-agent: *\nCrawl-delay: 3\n\nUser-agent: *\nCrawl-delay: 6\n",
                secs(6),
            ),
            (
                "consecutive user-agent lines share a group",
                "User-agent: otherbot\nUser-agent: hostpace\nCrawl-delay: 4\n",
                secs(4),
            ),
            (
                "blank lines and comments inside a user-agent run",
                "User-agent: otherbot\n\n# ours too\nUser-agent: hostpace\nCrawl-delay: 4\n",
                secs(4),
            ),
            (
                "sitemap does not split a user-agent run",
                "User-agent: otherbot\nSitemap: https://example.com/s.xml\nUser-agent: hostpace\nCrawl-delay: 4\n",
                secs(4),
            ),
            (
                "any group line ends the user-agent run",
                "User-agent: hostpace\nRequest-rate: 1/5\nUser-agent: otherbot\nCrawl-delay: 9\n",
                None,
            ),
            ("star and our token in one group", "User-agent: *\nUser-agent: hostpace\nCrawl-delay: 4\n", secs(4)),
            ("delay before any group", "Crawl-delay: 9\nUser-agent: otherbot\nDisallow: /\n", None),
            // Matching the token.
            ("case-insensitive keys and token", "USER-AGENT: HostPace\nCRAWL-DELAY: 7\n", secs(7)),
            ("versioned user-agent line", "User-agent: hostpace/2.0\nCrawl-delay: 7\n", secs(7)),
            ("no prefix matching", "User-agent: hostpacebot\nCrawl-delay: 9\nUser-agent: *\nCrawl-delay: 1", secs(1)),
            ("no prefix matching the other way", "User-agent: host\nCrawl-delay: 9\n", None),
            ("star with trailing text", "User-agent: * # everyone\nCrawl-delay: 5\n", secs(5)),
            // Values.
            ("fractional", "User-agent: *\nCrawl-delay: 0.5\n", Some(Duration::from_millis(500))),
            ("rounded up to milliseconds", "User-agent: *\nCrawl-delay: 0.0001\n", Some(Duration::from_millis(1))),
            ("zero", "User-agent: *\nCrawl-delay: 0\n", secs(0)),
            ("leading plus", "User-agent: *\nCrawl-delay: +3\n", secs(3)),
            ("huge saturates", "User-agent: *\nCrawl-delay: 99999999999999999999\n", Some(Duration::MAX)),
            ("negative ignored", "User-agent: *\nCrawl-delay: -1\n", None),
            ("NaN ignored", "User-agent: *\nCrawl-delay: NaN\n", None),
            ("exponent ignored", "User-agent: *\nCrawl-delay: 1e3\n", None),
            ("unit ignored", "User-agent: *\nCrawl-delay: 10s\n", None),
            ("comma decimal ignored", "User-agent: *\nCrawl-delay: 1,5\n", None),
            ("empty ignored", "User-agent: *\nCrawl-delay:\n", None),
            ("garbage does not erase a valid delay", "User-agent: *\nCrawl-delay: 5\nCrawl-delay: soon\n", secs(5)),
            // Syntax.
            ("comments", "User-agent: hostpace # our bot\nCrawl-delay: 3 # be nice\n# Crawl-delay: 100\n", secs(3)),
            ("CRLF", "User-agent: hostpace\r\nCrawl-delay: 3\r\n", secs(3)),
            ("lone CR", "User-agent: hostpace\rCrawl-delay: 3\r", secs(3)),
            ("byte-order mark", "\u{feff}User-agent: hostpace\nCrawl-delay: 3\n", secs(3)),
            ("whitespace around keys and values", "  User-agent :  hostpace \n\tCrawl-delay:\t2 \n", secs(2)),
            ("key spellings", "user_agent: hostpace\ncrawl_delay: 2\n", secs(2)),
            ("key without separator", "useragent: hostpace\ncrawldelay: 2\n", secs(2)),
            (
                "unknown lines ignored",
                "User-agent: hostpace\nFoo: bar\nnonsense\nCrawl-delay: 3\nSitemap: https://example.com/s.xml\n",
                secs(3),
            ),
            ("key and value need a colon", "User-agent hostpace\nCrawl-delay: 3\n", None),
            ("empty file", "", None),
            ("not robots.txt at all", "<html><body>Not found</body></html>", None),
        ];
        for (name, robots, want) in cases {
            assert_eq!(crawl_delay(robots, UA), *want, "{name}");
        }
    }

    #[test]
    fn crawler_without_a_product_token_gets_the_star_group() {
        let robots = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: hostpace\nCrawl-delay: 2\n";
        for agent in ["", "*", "   ", "123bot", "/0.1"] {
            assert_eq!(crawl_delay(robots, agent), secs(5), "{agent:?}");
        }
    }

    #[test]
    fn product_token_of_user_agents() {
        let cases = [
            ("hostpace/0.1 (+https://example.com/bot)", "hostpace"),
            ("hostpace", "hostpace"),
            ("hostpace 0.1", "hostpace"),
            ("  hostpace/0.1", "hostpace"),
            ("Example-Bot_2/1.0", "Example-Bot_"),
            ("Mozilla/5.0 (compatible; hostpace/0.1)", "Mozilla"),
            ("my.bot/1", "my"),
            ("*", ""),
            ("", ""),
            ("ébot", ""),
        ];
        for (agent, want) in cases {
            assert_eq!(product_token(agent), want, "{agent:?}");
        }
    }

    #[test]
    fn reading_stops_at_the_size_limit() {
        // A comment line of exactly `len` bytes.
        let pad = |len: usize| format!("#{}\n", "x".repeat(len - 2));
        let star = "User-agent: *\n";
        let cases: &[(&str, String, Option<Duration>)] = &[
            ("group past the limit is not read", format!("{}{star}Crawl-delay: 5\n", pad(MAX_ROBOTS_BYTES)), None),
            ("group before the limit is read", format!("{star}Crawl-delay: 5\n{}", pad(MAX_ROBOTS_BYTES)), secs(5)),
            (
                "a line cut by the limit is dropped, not read as 1",
                format!("{star}{}Crawl-delay: 10\n", pad(MAX_ROBOTS_BYTES - 2 * star.len())),
                None,
            ),
            (
                "a line ending exactly at the limit is read",
                format!("{star}{}Crawl-delay: 7\n# more\n", pad(MAX_ROBOTS_BYTES - 2 * star.len())),
                secs(7),
            ),
            (
                "a limit inside a multi-byte character does not panic",
                format!("{star}Crawl-delay: 5\n# {}", "é".repeat(MAX_ROBOTS_BYTES)),
                secs(5),
            ),
        ];
        for (name, robots, want) in cases {
            assert!(robots.len() > MAX_ROBOTS_BYTES, "{name}");
            assert_eq!(crawl_delay(robots, UA), *want, "{name}");
        }
    }
}
