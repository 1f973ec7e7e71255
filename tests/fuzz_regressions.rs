//! Inputs the fuzzers found (fuzz/regressions/<target>/), replayed on stable with the fuzz targets' own checks.
//! The `sequence` target's inputs are replayed by tests/observe_properties.rs.

use hostpace::HostKey;
use std::path::Path;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no regression inputs in {}", dir.display());
    out
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
