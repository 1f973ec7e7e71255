//! robots.txt (RFC 9309): which URLs a crawler may fetch, its `Crawl-delay`, its sitemaps, and what a fetch of the
//! file means ([`RobotsFile`]).
//!
//! ```
//! use hostpace::robots::Robots;
//! use std::time::Duration;
//!
//! let robots = Robots::parse("User-agent: *\nDisallow: /private\nAllow: /private/open\nCrawl-delay: 2\n");
//! assert!(robots.allows("ExampleBot/2.1 (+https://example.com/bot)", "https://example.com/a/b?c"));
//! assert!(!robots.allows("examplebot", "/private/x"));
//! assert!(robots.allows("examplebot", "/private/open/x"));
//! assert_eq!(robots.crawl_delay("ExampleBot/2.1"), Some(Duration::from_secs(2)));
//! ```
//!
//! Reading the file, all in [`Robots::parse`] (which never fails):
//!
//! - Only the first [`MAX_ROBOTS_BYTES`] are read (RFC 9309 §2.5 lets a crawler stop there); a line cut by that
//!   limit is dropped. A leading byte-order mark is skipped; LF, CRLF and CR end lines; `#` starts a comment.
//! - A line is `key: value` (the colon is required); space around both is ignored; lines of any other shape and
//!   unknown keys are ignored.
//! - Keys are case-insensitive. Spellings read: `user-agent` (also `user_agent`, `useragent`, `user agent`),
//!   `allow`, `disallow` (also the misspellings `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`: reading
//!   a misspelt `disallow` can only make the crawler more polite), `crawl-delay` (also `crawl_delay`,
//!   `crawldelay`), `sitemap` (also `site-map`).
//! - A group is one or more `user-agent` lines followed by its rules. `user-agent` lines in a row share one group
//!   (blank lines, comments, `sitemap`, `crawl-delay` and unknown lines between them do not count); an `allow` or
//!   `disallow` line ends the run, so the next `user-agent` starts a new group. Rules before any `user-agent`
//!   line belong to no group and are ignored.
//! - `crawl-delay` is not part of RFC 9309, which says other records must not change how the rules are read
//!   (§2.2.4), so its lines are grouped apart: a `crawl-delay` applies to the `user-agent` lines of its run
//!   named before it, and ends that run for delays only (files often give each crawler a group of a
//!   `crawl-delay` alone: `User-agent: a`, `Crawl-delay: 5`, `User-agent: b`, `Disallow: /x` gives `a` a delay
//!   of 5 s, and both `a` and `b` the rule).
//! - `sitemap` lines are read wherever they are (they belong to no group).
//!
//! Which group applies to a crawler, in [`Robots::allows`], [`Robots::crawl_delay`] and
//! [`Robots::matching_rule`]:
//!
//! - The crawler is known by its product token ([`product_token`]): `examplebot` for
//!   `ExampleBot/2.1 (+https://example.com/bot)`. A `user-agent` value is read the same way (`hostpace/2.0` is
//!   `hostpace`) and compared ignoring case. No prefix matching: `hostpacebot` is another crawler.
//! - Every group that names the crawler applies (they are merged). When none does, the `*` groups apply instead;
//!   a group that names the crawler without a rule or a `Crawl-delay` means none, not the `*` one.
//!
//! Which rule decides (§2.2.2): the rules' patterns are compared with the request's path and query (from a full
//! URL or given as a path), both in one canonical spelling (see `path.rs`: unreserved characters compared decoded,
//! reserved ones as written, so `%2F` is not `/`; paths are case-sensitive). `*` matches any run of characters and
//! a final `$` anchors the end. Of the rules that match, the longest pattern wins; on equal length `allow` wins.
//! An empty `allow` or `disallow` value is no rule (so `Disallow:` allows everything), and `/robots.txt` itself is
//! always allowed. No matching rule: allowed.
//!
//! `Crawl-delay` (not in RFC 9309, widely used) is seconds: `2`, or fractional `0.5` (rounded up to whole
//! milliseconds). Negative, `NaN`, exponent or other garbage values are ignored; huge values saturate at
//! [`Duration::MAX`] (the caller caps them). Of several that apply, the largest wins (the most polite reading).
//!
//! The parser is written here rather than taken from a crate: the maintained candidate, `texting_robots`, pulls in
//! `regex` and half a dozen other crates, too much for the wasm module's budget for a line splitter and a
//! wildcard matcher. The tests hold it to the RFC's examples and to a reference matcher built on `regex`.

mod fetch;
mod path;

pub use fetch::{RobotsCopy, RobotsFile, RobotsRecord, RobotsTiming, Verdict};

use crate::response::{parse_seconds, Seconds};
use path::{request_path, Pattern};
use std::fmt;
use std::time::Duration;

/// How much of a robots.txt is read: 500 KiB, the least RFC 9309 §2.5 requires a crawler to parse.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// A parsed robots.txt: its groups with their rules compiled, and its sitemaps. See the
/// [module documentation](self) for the rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Robots {
    /// The groups of rules: `user-agent` runs ended by an `allow` or `disallow` line.
    groups: Vec<Group>,
    /// The groups of `Crawl-delay`: the same runs, ended by a `crawl-delay` line too (their `rules` are empty).
    delays: Vec<Group>,
    sitemaps: Vec<String>,
}

/// One group: the crawlers it names and what it says to them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Group {
    /// Product tokens named, as written.
    agents: Vec<String>,
    /// Named `*`.
    star: bool,
    /// In file order.
    rules: Vec<Rule>,
    /// Where to look for a path's rules (built once they are all read).
    index: RuleIndex,
    /// The largest valid `Crawl-delay`.
    delay: Option<Duration>,
}

/// A group's rules by their head, the literal text their pattern starts with: a path can match only the rules
/// whose head is one of its prefixes, so a file of thousands of rules costs a search per distinct head length, not
/// a comparison per rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RuleIndex {
    /// The rules (indexes into the group's) by head, then longest pattern first and, of equal lengths, `allow`
    /// first.
    order: Vec<u32>,
    /// The rules of each head, `start..end` in `order`, in the order of their heads.
    spans: Vec<(usize, usize)>,
    /// The distinct head lengths, ascending.
    head_lengths: Vec<usize>,
}

impl Group {
    /// The order in which `rule` is tried among the group's rules: by head, then highest priority first.
    fn rank(&self, rule: u32) -> (&str, std::cmp::Reverse<(usize, bool)>) {
        let rule = &self.rules[rule as usize];
        (rule.pattern.head(), std::cmp::Reverse(rule.priority()))
    }

    fn index(&mut self) {
        let mut index = RuleIndex::default();
        // each rule placed after those that rank before it or alike (a sort without a sort's code in the wasm)
        for i in 0..self.rules.len() as u32 {
            let at = index.order.partition_point(|&j| self.rank(j) <= self.rank(i));
            index.order.insert(at, i);
            let head = self.rules[i as usize].pattern.head().len();
            if let Err(at) = index.head_lengths.binary_search(&head) {
                index.head_lengths.insert(at, head);
            }
        }
        for (k, &i) in index.order.iter().enumerate() {
            let head = self.rules[i as usize].pattern.head();
            match index.spans.last_mut() {
                Some((start, end)) if self.rules[index.order[*start] as usize].pattern.head() == head => *end = k + 1,
                _ => index.spans.push((k, k + 1)),
            }
        }
        self.index = index;
    }

    /// The rule of this group that decides for `path` (canonical spelling): of those that match, the longest
    /// pattern, `allow` on a tie.
    fn decide(&self, path: &str) -> Option<&Rule> {
        let rule = |k: usize| &self.rules[self.index.order[k] as usize];
        let mut best: Option<&Rule> = None;
        for &len in &self.index.head_lengths {
            // canonical paths are ASCII, so every length is a character boundary
            let Some(head) = path.get(..len) else { break };
            let found = self.index.spans.binary_search_by(|&(start, _)| rule(start).pattern.head().cmp(head));
            let Ok(at) = found else { continue };
            let (start, end) = self.index.spans[at];
            // in priority order: the first that matches is this head's best
            let matched = (start..end).map(rule).find(|r| r.pattern.matches(path));
            if let Some(r) = matched.filter(|r| best.is_none_or(|b| r.priority() > b.priority())) {
                best = Some(r);
            }
        }
        best
    }
}

/// An `allow` or `disallow` line of a robots.txt, as [`Robots::matching_rule`] returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    allow: bool,
    pattern: Pattern,
    written: String,
    line: usize,
}

impl Rule {
    /// An `allow` rule (else `disallow`).
    pub fn allow(&self) -> bool {
        self.allow
    }

    /// The pattern as the file spells it.
    pub fn pattern(&self) -> &str {
        &self.written
    }

    /// Its line in the file, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The pattern's length in its canonical spelling, then `allow`: of two matching rules, the greater decides.
    fn priority(&self) -> (usize, bool) {
        (self.pattern.len(), self.allow)
    }
}

/// `Disallow: /private (line 3)`.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = if self.allow { "Allow" } else { "Disallow" };
        write!(f, "{key}: {} (line {})", self.written, self.line)
    }
}

impl Robots {
    /// Read a robots.txt; never fails (anything it cannot read is ignored) and reads at most
    /// [`MAX_ROBOTS_BYTES`].
    pub fn parse(robots_txt: &str) -> Robots {
        let mut robots = Robots::default();
        // in a run of `user-agent` lines: of rules, of delays
        let (mut in_rules_run, mut in_delays_run) = (false, false);
        for (index, line) in lines(bounded(robots_txt)).enumerate() {
            let line = line.split_once('#').map_or(line, |(content, _comment)| content);
            let Some((key, value)) = line.split_once(':') else { continue };
            let value = value.trim_matches(is_space);
            let key = Key::of(key.trim_matches(is_space));
            match key {
                Key::UserAgent => {
                    let star =
                        value.strip_prefix('*').is_some_and(|rest| rest.is_empty() || rest.starts_with(is_space));
                    let token = product_token(value);
                    for (groups, in_run) in
                        [(&mut robots.groups, &mut in_rules_run), (&mut robots.delays, &mut in_delays_run)]
                    {
                        if !*in_run {
                            groups.push(Group::default());
                            *in_run = true;
                        }
                        let Some(group) = groups.last_mut() else { continue };
                        if star {
                            group.star = true;
                        } else if !token.is_empty() {
                            group.agents.push(token.to_owned());
                        }
                    }
                }
                Key::Allow | Key::Disallow => {
                    (in_rules_run, in_delays_run) = (false, false);
                    let Some(group) = robots.groups.last_mut() else { continue };
                    if !value.is_empty() {
                        let allow = key == Key::Allow;
                        let written = value.to_owned();
                        group.rules.push(Rule { allow, pattern: Pattern::new(value), written, line: index + 1 });
                    }
                }
                Key::CrawlDelay => {
                    in_delays_run = false;
                    let Some(group) = robots.delays.last_mut() else { continue };
                    if let Some(Seconds::NonNegative(delay)) = parse_seconds(value) {
                        group.delay = group.delay.max(Some(delay));
                    }
                }
                Key::Sitemap => {
                    if !value.is_empty() {
                        robots.sitemaps.push(value.to_owned());
                    }
                }
                Key::Other => {}
            }
        }
        for group in &mut robots.groups {
            group.index();
        }
        robots
    }

    /// Whether `user_agent` (a full User-Agent or its product token) may fetch `url` (an absolute URL, or a path
    /// with its query).
    pub fn allows(&self, user_agent: &str, url: &str) -> bool {
        self.matching_rule(user_agent, url).is_none_or(Rule::allow)
    }

    /// The rule that decides whether `user_agent` may fetch `url`, or `None` when no rule matches (allowed).
    pub fn matching_rule(&self, user_agent: &str, url: &str) -> Option<&Rule> {
        let path = request_path(url);
        if path == "/robots.txt" {
            return None;
        }
        groups_for(&self.groups, user_agent).filter_map(|group| group.decide(&path)).max_by_key(|rule| rule.priority())
    }

    /// The `Crawl-delay` that applies to `user_agent`, or `None` when no applicable group sets one.
    pub fn crawl_delay(&self, user_agent: &str) -> Option<Duration> {
        groups_for(&self.delays, user_agent).filter_map(|group| group.delay).max()
    }

    /// The `Sitemap` URLs, in file order.
    pub fn sitemaps(&self) -> impl Iterator<Item = &str> {
        self.sitemaps.iter().map(String::as_str)
    }

    /// [`Robots::parse`] of a body as fetched: a leading byte-order mark is skipped whole or cut short (`EF`,
    /// `EF BB`), and bytes that are not UTF-8 read as U+FFFD.
    pub fn parse_bytes(body: &[u8]) -> Robots {
        let body = [&[0xEF, 0xBB, 0xBF][..], &[0xEF, 0xBB], &[0xEF]]
            .iter()
            .find_map(|bom| body.strip_prefix(*bom))
            .unwrap_or(body);
        // one byte past the limit, so that `parse` sees whether the limit cuts a line
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES + 1)];
        Robots::parse(&String::from_utf8_lossy(body))
    }

    /// `allow` and `disallow` rules read, in every group.
    pub fn rule_count(&self) -> usize {
        self.groups.iter().map(|group| group.rules.len()).sum()
    }
}

/// The groups of `groups` that apply to `user_agent`: those naming its product token, else the `*` ones.
fn groups_for<'a, 'u>(groups: &'a [Group], user_agent: &'u str) -> impl Iterator<Item = &'a Group> + use<'a, 'u> {
    let token = product_token(user_agent);
    let names = move |group: &Group| !token.is_empty() && group.agents.iter().any(|a| a.eq_ignore_ascii_case(token));
    let ours = groups.iter().any(names);
    groups.iter().filter(move |group| if ours { names(group) } else { group.star })
}

/// The `Crawl-delay` that `robots_txt` sets for the crawler `user_agent` (its full User-Agent, or just its product
/// token), or `None` when no applicable group sets one: [`Robots::crawl_delay`] of the parsed file.
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
    Robots::parse(robots_txt).crawl_delay(user_agent)
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
    let agent = user_agent.trim_matches(is_space);
    let end = agent.find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '-')).unwrap_or(agent.len());
    &agent[..end]
}

/// Whitespace around a robots.txt key, value or agent, as Google's parser reads it (C's `isspace`: space, tab,
/// LF, VT, FF, CR); any other character, a no-break space say, is text.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The keys of a robots.txt line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    CrawlDelay,
    /// Not part of any group (RFC 9309 §2.3.5).
    Sitemap,
    /// Ignored.
    Other,
}

impl Key {
    fn of(key: &str) -> Key {
        let is = |words: [&str; 2]| {
            let Some(rest) = strip_prefix_ignore_case(key, words[0]) else { return false };
            let rest = rest.strip_prefix(['-', '_', ' ']).unwrap_or(rest);
            rest.eq_ignore_ascii_case(words[1])
        };
        let any = |spellings: &[&str]| spellings.iter().any(|s| key.eq_ignore_ascii_case(s));
        if is(["user", "agent"]) {
            Key::UserAgent
        } else if key.eq_ignore_ascii_case("allow") {
            Key::Allow
        } else if any(&["disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"]) {
            Key::Disallow
        } else if is(["crawl", "delay"]) {
            Key::CrawlDelay
        } else if any(&["sitemap", "site-map"]) {
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

/// The lines of `text`: ended by LF, CRLF or CR (a CRLF is one end, so line numbers count it once).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\n', '\r']) {
            Some(at) => {
                let skip = if text[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[at + skip..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
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
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

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
                "an unknown line does not end the user-agent run",
                "User-agent: hostpace\nRequest-rate: 1/5\nUser-agent: otherbot\nCrawl-delay: 9\n",
                secs(9),
            ),
            (
                "a crawl-delay line ends the user-agent run of delays",
                "User-agent: hostpace\nCrawl-delay: 2\nUser-agent: otherbot\nCrawl-delay: 9\n",
                secs(2),
            ),
            (
                "a crawl-delay line applies to the agents named before it",
                "User-agent: hostpace\nCrawl-delay: 2\nUser-agent: otherbot\nDisallow: /x\nCrawl-delay: 9\n",
                secs(2),
            ),
            (
                "a rule line ends the user-agent run",
                "User-agent: hostpace\nDisallow: /a\nUser-agent: otherbot\nCrawl-delay: 9\n",
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

    /// (robots.txt, user agent, URL or path, allowed)
    const ALLOWS: &[(&str, &str, &str, &str, bool)] = &[
        // Groups.
        ("no robots.txt rules", "", UA, "/x", true),
        ("star group", "User-agent: *\nDisallow: /x\n", UA, "/x", false),
        ("star group, other path", "User-agent: *\nDisallow: /x\n", UA, "/y", true),
        ("our group over star", "User-agent: *\nDisallow: /\n\nUser-agent: hostpace\nDisallow: /x\n", UA, "/y", true),
        ("star ignored when we are named", "User-agent: hostpace\nAllow: /\nUser-agent: *\nDisallow: /\n", UA, "/y", true),
        ("named without rules: no rules", "User-agent: *\nDisallow: /\nUser-agent: hostpace\nCrawl-delay: 1\n", UA, "/y", true),
        ("other crawler's group", "User-agent: otherbot\nDisallow: /\n", UA, "/y", true),
        (
            "a crawl-delay line does not end a user-agent run",
            "User-agent: hostpace\nCrawl-delay: 5\nUser-agent: otherbot\nDisallow: /private\n",
            UA,
            "/private/x",
            false,
        ),
        (
            "groups naming us are merged",
            "User-agent: hostpace\nDisallow: /a\n\nUser-agent: otherbot\nDisallow: /b\n\nUser-agent: hostpace\nDisallow: /c\n",
            UA,
            "/c/1",
            false,
        ),
        (
            "merged groups: longest rule of all wins",
            "User-agent: hostpace\nDisallow: /a\n\nUser-agent: hostpace\nAllow: /a/b\n",
            UA,
            "/a/b/c",
            true,
        ),
        ("user-agent lines in a row share a group", "User-agent: a\nUser-agent: hostpace\nDisallow: /\n", UA, "/x", false),
        ("blank line inside the run", "User-agent: a\n\nUser-agent: hostpace\nDisallow: /\n", UA, "/x", false),
        ("a rule ends the run", "User-agent: hostpace\nAllow: /a\nUser-agent: b\nDisallow: /\n", UA, "/x", true),
        ("rules before any group are ignored", "Disallow: /\nUser-agent: otherbot\nDisallow: /\n", UA, "/x", true),
        ("agent matched ignoring case", "User-agent: HOSTPACE\nDisallow: /\n", "HostPace/1.0", "/x", false),
        ("agent with a version in the file", "User-agent: hostpace/2.0\nDisallow: /\n", UA, "/x", false),
        ("agent text after the token", "User-agent: hostpace bot\nDisallow: /\n", UA, "/x", false),
        ("no prefix matching", "User-agent: hostpacebot\nDisallow: /\n", UA, "/x", true),
        ("our full user agent string", "User-agent: hostpace\nDisallow: /\n", "hostpace/0.1 (+https://e.com/bot)", "/x", false),
        ("star with a comment", "User-agent: * # all\nDisallow: /\n", UA, "/x", false),
        // Longest match; allow on ties.
        ("longer disallow wins", "User-agent: *\nAllow: /page\nDisallow: /*.html\n", UA, "/page.html", false),
        ("longer allow wins", "User-agent: *\nAllow: /x/page.\nDisallow: /*.html\n", UA, "/x/page.html", true),
        ("tie: allow wins", "User-agent: *\nDisallow: /page\nAllow: /page\n", UA, "/page", true),
        ("tie either order", "User-agent: *\nAllow: /page\nDisallow: /page\n", UA, "/page", true),
        ("allow / and disallow /", "User-agent: *\nAllow: /\nDisallow: /\n", UA, "/x", true),
        ("anchored allow of the root", "User-agent: *\nAllow: /$\nDisallow: /\n", UA, "/", true),
        ("anchored allow of the root only", "User-agent: *\nAllow: /$\nDisallow: /\n", UA, "/page", false),
        ("no matching rule", "User-agent: *\nDisallow: /a\n", UA, "/b", true),
        // Empty values.
        ("empty disallow allows everything", "User-agent: *\nDisallow:\n", UA, "/x", true),
        ("empty allow is no rule", "User-agent: *\nAllow:\nDisallow: /x\n", UA, "/x", false),
        // robots.txt itself.
        ("robots.txt always allowed", "User-agent: *\nDisallow: /\n", UA, "/robots.txt", true),
        ("robots.txt by URL", "User-agent: *\nDisallow: /\n", UA, "https://e.com/robots.txt", true),
        ("robots.txt with a query is not robots.txt", "User-agent: *\nDisallow: /\n", UA, "/robots.txt?x", false),
        // Wildcards and anchors.
        ("star in the middle", "User-agent: *\nDisallow: /a/*/c\n", UA, "/a/b/c", false),
        ("star matches nothing too", "User-agent: *\nDisallow: /a*c\n", UA, "/ac", false),
        ("dollar anchors", "User-agent: *\nDisallow: /a$\n", UA, "/a", false),
        ("dollar anchors: longer path", "User-agent: *\nDisallow: /a$\n", UA, "/ab", true),
        ("dollar mid-pattern is literal", "User-agent: *\nDisallow: /a$b\n", UA, "/a$b", false),
        ("query matched", "User-agent: *\nDisallow: /*?session=\n", UA, "/p?session=1", false),
        ("fragment not matched", "User-agent: *\nDisallow: /*frag\n", UA, "https://e.com/p#frag", true),
        // Paths: case, encoding, URL normalisation.
        ("paths are case-sensitive", "User-agent: *\nDisallow: /Private\n", UA, "/private", true),
        ("unreserved decoded", "User-agent: *\nDisallow: /%62%61%7A\n", UA, "/baz", false),
        ("unreserved decoded in the URL", "User-agent: *\nDisallow: /~user\n", UA, "/%7Euser", false),
        ("encoded slash is not a slash", "User-agent: *\nDisallow: /a/b\n", UA, "/a%2Fb", true),
        ("encoded slash matches itself", "User-agent: *\nDisallow: /a%2fb\n", UA, "/a%2Fb", false),
        ("UTF-8 pattern, encoded URL", "User-agent: *\nDisallow: /ツ\n", UA, "/%E3%83%84", false),
        ("encoded pattern, UTF-8 URL", "User-agent: *\nDisallow: /%E3%83%84\n", UA, "https://e.com/ツ", false),
        ("lower-case escapes", "User-agent: *\nDisallow: /%e3%83%84\n", UA, "/%E3%83%84", false),
        ("space in a pattern", "User-agent: *\nDisallow: /a b\n", UA, "/a%20b", false),
        ("dot segments resolved", "User-agent: *\nDisallow: /private\n", UA, "https://e.com/a/../private", false),
        ("dot segments in a path", "User-agent: *\nDisallow: /private\n", UA, "/a/./../private/x", false),
        ("backslashes read as slashes", "User-agent: *\nDisallow: /a/b\n", UA, "https://e.com\\a\\b", false),
        ("reserved characters as written", "User-agent: *\nDisallow: /q?u=http://x\n", UA, "/q?u=http://x/y", false),
        (
            "RFC 9309 table: a query's : and / written or encoded",
            "User-agent: *\nDisallow: /foo/bar?baz=https://foo.bar\n",
            UA,
            "https://e.com/foo/bar?baz=https%3A%2F%2Ffoo.bar",
            false,
        ),
        ("an encoded query matches a written one", "User-agent: *\nDisallow: /q?u=http%3A%2F%2Fx\n", UA, "/q?u=http://x", false),
        ("a quote in a query, as WHATWG sends it", "User-agent: *\nDisallow: /a?b='x'\n", UA, "https://e.com/a?b='x'", false),
        ("a query's field delimiters as written", "User-agent: *\nDisallow: /a?b=1&c\n", UA, "/a?b=1%26c", true),
        ("an encoded slash in a path is still not a slash", "User-agent: *\nDisallow: /a/b?c\n", UA, "/a%2Fb?c", true),
        ("dot segments in a URL the parser refuses", "User-agent: *\nDisallow: /private\n", UA, "https://u:p@e.com/a/../private", false),
        ("a tab in a URL the parser refuses", "User-agent: *\nDisallow: /private\n", UA, "https://u:p@e.com/pri\tvate", false),
        // a pattern's literal characters match wherever its wildcards put them, in the query too
        ("a wildcard into the query", "User-agent: *\nDisallow: /*=http://\n", UA, "/go?to=http://evil", false),
        ("a wildcard into an encoded query", "User-agent: *\nDisallow: /*=http://\n", UA, "/go?to=http%3A%2F%2Fevil", false),
        ("a slash after a wildcard, in the query", "User-agent: *\nDisallow: /*/admin\n", UA, "/login?next=/admin", false),
        ("a colon after a wildcard, in the query", "User-agent: *\nDisallow: /*Special:Search\n", UA, "/w?title=Special:Search", false),
        ("a second ? in the query", "User-agent: *\nDisallow: /a*?b\n", UA, "/a?x?b", false),
        (
            "the longest pattern as written decides in a query",
            "User-agent: *\nAllow: /p?u=a://bcd\nDisallow: /p?u=a*bcdefghij\n",
            UA,
            "/p?u=a://bcdefghij",
            false,
        ),
        // Syntax.
        ("comments", "User-agent: * # all\nDisallow: /a # not /b\n# Disallow: /\n", UA, "/b", true),
        ("comment cuts the pattern", "User-agent: *\nDisallow: /a#b\n", UA, "/a", false),
        ("CRLF", "User-agent: *\r\nDisallow: /a\r\n", UA, "/a", false),
        ("lone CR", "User-agent: *\rDisallow: /a\r", UA, "/a", false),
        ("byte-order mark", "\u{feff}User-agent: *\nDisallow: /a\n", UA, "/a", false),
        ("keys in any case", "USER-AGENT: *\nDISALLOW: /a\n", UA, "/a", false),
        ("user agent spelt with a space", "User agent: *\nDisallow: /a\n", UA, "/a", false),
        ("disallow misspelt", "User-agent: *\nDissallow: /a\n", UA, "/a", false),
        ("allow is not misspelt", "User-agent: *\nDisallow: /\nAlow: /a\n", UA, "/a", false),
        ("no colon: ignored", "User-agent: *\nDisallow /a\n", UA, "/a", true),
        ("whitespace around", "  User-agent :  *  \n\t Disallow :\t/a \n", UA, "/a", false),
        // whitespace is what Google's parser strips (`isspace`, vertical tab included); another space is text
        ("a no-break space is text", "User-agent: *\nDisallow: /a\u{a0}\n", UA, "/a", true),
        ("a no-break space is text, encoded", "User-agent: *\nDisallow: /a\u{a0}\n", UA, "/a%C2%A0", false),
        ("an agent with a no-break space", "User-agent: \u{a0}*\nDisallow: /a\n", UA, "/a", true),
        ("a vertical tab is whitespace", "User-agent\x0b: *\x0b\nDisallow:\x0b/a\x0b\n", UA, "/a", false),
        ("unknown lines ignored", "User-agent: *\nFoo: bar\nnonsense\nDisallow: /a\n", UA, "/a", false),
        ("not robots.txt at all", "<html><body>Not found</body></html>", UA, "/a", true),
        // URL forms.
        ("full URL", "User-agent: *\nDisallow: /a\n", UA, "https://example.com/a/b?c", false),
        ("URL without a path", "User-agent: *\nDisallow: /$\n", UA, "https://example.com", false),
        ("URL with only a query", "User-agent: *\nDisallow: /?\n", UA, "https://example.com?q", false),
    ];

    #[test]
    fn allows_by_the_rules() {
        for (name, robots, agent, url, want) in ALLOWS {
            let parsed = Robots::parse(robots);
            assert_eq!(parsed.allows(agent, url), *want, "{name}: {robots:?} {agent:?} {url:?}");
            let rule = parsed.matching_rule(agent, url);
            assert_eq!(rule.is_none_or(Rule::allow), *want, "{name}: the matching rule agrees");
        }
    }

    #[test]
    fn the_matching_rule_names_its_line() {
        let robots = Robots::parse("User-agent: *\r\n\r\nDisallow: /private # keep out\nAllow: /private/open\n");
        let rule = robots.matching_rule(UA, "https://example.com/private/x").map(ToString::to_string);
        assert_eq!(rule.as_deref(), Some("Disallow: /private (line 3)"));
        let rule = robots.matching_rule(UA, "/private/open/y").map(|r| (r.allow(), r.pattern().to_owned(), r.line()));
        assert_eq!(rule, Some((true, "/private/open".to_owned(), 4)));
        assert_eq!(robots.matching_rule(UA, "/public"), None);
        assert_eq!(robots.rule_count(), 2);
    }

    #[test]
    fn sitemaps_anywhere() {
        let robots = Robots::parse(
            "Sitemap: https://e.com/a.xml\nUser-agent: a\nSitemap: https://e.com/b.xml\nUser-agent: hostpace\n\
             Disallow: /\nsite-map: https://e.com/c.xml # c\nSitemap:\n",
        );
        assert_eq!(
            robots.sitemaps().collect::<Vec<_>>(),
            ["https://e.com/a.xml", "https://e.com/b.xml", "https://e.com/c.xml"]
        );
        assert!(!robots.allows("a", "/x"), "a sitemap line does not split a user-agent run");
    }

    #[test]
    fn bodies_as_bytes() {
        let rules = b"User-Agent: foo\nDisallow: /a\n";
        for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF", b""] {
            let body = [bom, rules].concat();
            assert!(!Robots::parse_bytes(&body).allows("foo", "/a"), "{bom:?}");
        }
        let broken = b"\xEF\x11\xBFUser-Agent: foo\nDisallow: /a\n";
        assert!(Robots::parse_bytes(broken).allows("foo", "/a"), "not a BOM: the first line is garbage");
        let invalid = b"User-Agent: foo\nDisallow: /\xFF\n";
        assert!(!Robots::parse_bytes(invalid).allows("foo", "/%EF%BF%BD"));
        let mut huge = b"User-agent: *\nDisallow: /a\n#".to_vec();
        huge.resize(MAX_ROBOTS_BYTES, b'x');
        huge.extend_from_slice(b"\nDisallow: /b\n");
        let robots = Robots::parse_bytes(&huge);
        assert!(!robots.allows(UA, "/a") && robots.allows(UA, "/b"), "read up to the limit only");
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
