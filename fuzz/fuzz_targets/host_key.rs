//! Host keys from any URL or host text: never a panic; a key is stable (parsing its own text gives itself),
//! lowercase, and without a trailing dot.
#![no_main]
use hostpace::HostKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for key in [HostKey::from_url(&text), HostKey::parse(&text)].into_iter().flatten() {
        let s = key.as_str();
        assert!(!s.ends_with('.'), "{s:?}");
        assert_eq!(s, s.to_ascii_lowercase(), "{s:?}");
        assert_eq!(HostKey::parse(s).as_ref(), Ok(&key), "{s:?} is not stable");
    }
});
