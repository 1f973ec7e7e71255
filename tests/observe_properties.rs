//! Random acquire/observe/robots/release sequences (the `sequence` fuzz target's invariants, on stable):
//! never a panic, never a departure before `now`, and every host's schedule passes `audit`.

#[path = "support/driver.rs"]
mod driver;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_every_invariant(data in proptest::collection::vec(any::<u8>(), 0..800)) {
        driver::run(&data);
    }
}

/// Inputs the fuzzer found interesting are replayed here too (see FUZZING.md).
#[test]
fn fuzz_regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/sequence");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let data = std::fs::read(entry.path()).unwrap_or_default();
        driver::run(&data);
    }
}
