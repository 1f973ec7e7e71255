//! Random acquire/observe/robots/release sequences on a registry: never a panic, never a departure before now,
//! and every host's departure schedule passes `audit` (the driver is shared with the stable property test).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/driver.rs"]
mod driver;

fuzz_target!(|data: &[u8]| driver::run(data));
