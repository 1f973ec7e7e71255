//! RateLimit / RateLimit-Policy / X-RateLimit-* headers: never a panic, never an error to the crawl; a response
//! marked stale (Age > 0) yields nothing (the checks: fuzz/checks.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

mod checks {
    #![allow(dead_code)]
    include!("../checks.rs");
}

fuzz_target!(|data: &[u8]| checks::check_ratelimit(data));
