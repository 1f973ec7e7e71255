//! Host keys from any URL or host text: never a panic; a key is stable (parsing its own text gives itself),
//! lowercase, and without a trailing dot; the origin cache (which reads plainly spelled origins without the
//! parser) gives what the parser gives.
#![no_main]
use hostpace::{HostKey, OriginCache};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for key in [HostKey::from_url(&text), HostKey::parse(&text)].into_iter().flatten() {
        let s = key.as_str();
        assert!(!s.ends_with('.'), "{s:?}");
        assert_eq!(s, s.to_ascii_lowercase(), "{s:?}");
        assert_eq!(HostKey::parse(s).as_ref(), Ok(&key), "{s:?} is not stable");
    }
    for url in [text.to_string(), format!("http://{text}/"), format!("https://{text}")] {
        assert_eq!(OriginCache::default().key_of(&url), HostKey::from_url(&url), "{url:?}");
    }
});
