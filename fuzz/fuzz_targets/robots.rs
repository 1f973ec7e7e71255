//! robots.txt of any shape and any user agent: never a panic; a Crawl-delay found is non-negative and bounded
//! work is done on huge input.
#![no_main]
use hostpace::robots::{crawl_delay, product_token};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (ua, body) = text.split_once('\n').unwrap_or(("hostpace/1.0", &text));
    let _ = product_token(ua);
    let _ = crawl_delay(body, ua);
    let _ = crawl_delay(body, "*");
});
