//! Host keys: one key per origin host, however the URL spells it.
//!
//! URL parsing is done by a real WHATWG URL parser: the `url` crate natively, the platform's own `URL` in
//! WebAssembly (browsers, Node, workerd all ship one), which keeps the IDNA tables out of the wasm module.

//!
//! - `key`: [`HostKey`] itself (inline text, comparison and hashing) and the hasher of host tables;
//! - `parse`: URLs and host names to keys ([`parse_http_url`], [`HostKey::from_url`], [`HostKey::parse`]);
//! - `intern`: keys as dense ids ([`Interner`]) and by URL origin ([`OriginCache`]);
//! - `site`: the site of a host (its registrable domain, from the Public Suffix List: [`HostKey::site`]).

mod intern;
mod key;
mod parse;
mod site;

pub use intern::{Interner, OriginCache};
pub use key::HostKey;
pub(crate) use key::KeyHasher;
pub(crate) use parse::plain_origin;
pub use parse::{parse_http_url, HttpUrl, MAX_HOST_LEN, MAX_URL_LEN};
pub use site::{public_suffix_list, set_public_suffix_list, RegistrableDomain};

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn inline_and_heap_keys_behave_alike_at_the_boundary() {
        use std::hash::BuildHasher;
        // 21, 22 (last inline) and 23, 40 bytes (heap)
        let long = "a".repeat(36) + ".com";
        let texts = ["a2345678901234567.com", "a23456789012345678.com", "a234567890123456789.com", long.as_str()];
        assert_eq!(texts.map(str::len), [21, HostKey::INLINE, 23, 40]);
        let keys: Vec<HostKey> = texts.iter().map(|t| HostKey::parse(t).unwrap()).collect();
        let hasher = KeyHasher::default();
        for (t, k) in texts.iter().zip(&keys) {
            assert_eq!(k.as_str(), *t);
            assert_eq!(k.to_string(), *t);
            assert_eq!(String::from(k.clone()), *t);
            assert_eq!(format!("{k:?}"), format!("HostKey({t:?})"));
            // the same text spelled differently gives an equal key with an equal hash, inline or not
            let other = HostKey::from_url(&format!("HTTP://{}.:80/x", t.to_uppercase())).unwrap();
            assert_eq!(&other, k);
            assert_eq!(hasher.hash_one(&other), hasher.hash_one(k));
            assert_eq!(hasher.hash_one(k), hasher.hash_one(t));
            let json = serde_json::to_string(k).unwrap();
            assert_eq!(serde_json::from_str::<HostKey>(&json).unwrap(), *k);
        }
        for (i, a) in keys.iter().enumerate() {
            for (j, b) in keys.iter().enumerate() {
                assert_eq!(a == b, i == j);
                assert_eq!(a.cmp(b), texts[i].cmp(texts[j]));
            }
        }
        // a port makes a key longer: "x…x.com:8080" past the inline bound
        let k = HostKey::from_url("http://a2345678901234567.com:8080/").unwrap();
        assert_eq!(k.as_str(), "a2345678901234567.com:8080");
    }
}
