//! Retry-After in any form, with any Date header: never a panic; a signed delay is refused; a wait resolved
//! against a Date with a four-digit year never depends on the wall clock (the checks: fuzz/checks.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

mod checks {
    #![allow(dead_code)]
    include!("../checks.rs");
}

fuzz_target!(|data: &[u8]| checks::check_retry_after(data));
