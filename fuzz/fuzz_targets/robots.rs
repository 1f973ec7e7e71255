//! robots.txt of any shape, any user agent and any URL or path: never a panic; a Crawl-delay found is
//! non-negative; the rule that decides agrees with `allows`; bounded work on huge input.
#![no_main]
use hostpace::robots::{crawl_delay, product_token, Robots};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // first line: the user agent; second: the URL or path; the rest: the file
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let ua = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let url = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = parts.next().unwrap_or_default();
    let _ = product_token(&ua);
    let robots = Robots::parse_bytes(body);
    for agent in [&*ua, "*", "hostpace/1.0"] {
        let rule = robots.matching_rule(agent, &url);
        assert_eq!(robots.allows(agent, &url), rule.is_none_or(|r| r.allow()));
        let _ = robots.crawl_delay(agent);
    }
    let _ = robots.sitemaps().count();
    let _ = crawl_delay(&String::from_utf8_lossy(body), &ua);
});
