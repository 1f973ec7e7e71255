//! Inputs the fuzzers found (fuzz/regressions/<target>/) and the `retry_after` and `ratelimit` corpora
//! (fuzz/corpus/<target>/), replayed on stable with the fuzz targets' own checks. The `sequence` target's inputs
//! are replayed by tests/observe_properties.rs.

use hostpace::HostKey;
use std::path::Path;

/// The fuzz targets' checks (the fuzz crate is outside the workspace: its file is included).
mod checks {
    include!("../fuzz/checks.rs");
}

/// Every file of `fuzz/<kind>/<target>/`, sorted by name.
fn files(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(kind).join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no inputs in {}", dir.display());
    out
}

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    files("regressions", target)
}

/// The `host_key` target's check: a key is lowercase, has no trailing dot, and its own text parses to itself.
#[test]
fn host_key_regressions() {
    for (name, data) in inputs("host_key") {
        let text = String::from_utf8_lossy(&data);
        for key in [HostKey::from_url(&text), HostKey::parse(&text)].into_iter().flatten() {
            let s = key.as_str();
            assert!(!s.ends_with('.'), "{name}: {s:?}");
            assert_eq!(s, s.to_ascii_lowercase(), "{name}");
            assert_eq!(HostKey::parse(s).as_ref(), Ok(&key), "{name}: {s:?} is not stable");
        }
    }
}

#[test]
fn sequence_regressions_are_kept() {
    assert!(inputs("sequence").len() >= 3);
}

/// The `retry_after` corpus, with the target's checks (fuzz/checks.rs).
#[test]
fn retry_after_corpus() {
    for (name, data) in files("corpus", "retry_after") {
        println!("{name}");
        checks::check_retry_after(&data);
    }
}

/// The `ratelimit` corpus, with the target's checks (fuzz/checks.rs).
#[test]
fn ratelimit_corpus() {
    for (name, data) in files("corpus", "ratelimit") {
        println!("{name}");
        checks::check_ratelimit(&data);
    }
}
