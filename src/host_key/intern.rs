//! Host keys as small dense ids ([`Interner`]), and found by their URL's literal origin ([`OriginCache`]).

use super::key::InlineText;
use super::parse::{plain_origin, plain_origin_key, MAX_URL_LEN};
use super::{HostKey, KeyHasher};
use crate::error::Error;
use crate::id_table::IdTable;

/// Host keys interned as dense ids (0, 1, 2…), found through a hash table of ids: the cheap handle a frontier or
/// a JS caller passes around instead of a string.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    keys: Vec<HostKey>,
    table: IdTable,
    hasher: KeyHasher,
}

impl Interner {
    /// The id of `key`, if interned.
    pub fn get(&self, key: &HostKey) -> Option<u32> {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(key);
        self.table.find(hash, |i| self.keys[i as usize] == *key)
    }

    /// The id of `key`, interning it if new.
    pub fn intern(&mut self, key: &HostKey) -> u32 {
        use std::hash::BuildHasher;
        if let Some(id) = self.get(key) {
            return id;
        }
        let Interner { keys, table, hasher } = self;
        let id = keys.len() as u32;
        keys.push(key.clone());
        table.insert(hasher.hash_one(key), id, &|i| hasher.hash_one(&keys[i as usize]));
        id
    }

    /// The key of `id`.
    pub fn key(&self, id: u32) -> Option<&HostKey> {
        self.keys.get(id as usize)
    }

    /// Keys interned.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Host keys of URLs, interned as small ids and cached by their literal origin prefix: a crawler asks about the
/// same origins again and again, and parsing a URL (in wasm, a round trip to the platform's parser) costs far more
/// than a lookup. The origin cache is bounded: it starts over when it holds [`OriginCache::LIMIT`] origins (ids
/// stay valid). URLs with an unusual spelling are parsed every time.
#[derive(Clone, Debug, Default)]
pub struct OriginCache {
    entries: Vec<Origin>,
    table: IdTable,
    hasher: KeyHasher,
    ids: Interner,
}

/// A plain origin in the [`OriginCache`], by what follows its `http://` (so `/` starts an `https` one's), and the
/// id of its host key. The text is inline up to [`HostKey::INLINE`] bytes (most host names and their scheme), so
/// finding an origin reads the table's slot and this entry, and no third place in memory.
#[derive(Clone, Debug)]
struct Origin {
    text: InlineText,
    id: u32,
}

impl OriginCache {
    /// Origins kept before the cache starts over.
    pub const LIMIT: usize = 100_000;

    /// The interned id of `url`'s host key (errors are [`HostKey::from_url`]'s).
    pub fn id_of(&mut self, url: &str) -> Result<u32, Error> {
        self.id_in(url, plain_origin(url))
    }

    /// [`OriginCache::id_of`] for a caller that has `url`'s [`plain_origin`] already (`origin` must be it).
    pub(crate) fn id_in(&mut self, url: &str, origin: Option<&str>) -> Result<u32, Error> {
        use std::hash::BuildHasher;
        let Some(origin) = origin.filter(|_| url.len() <= MAX_URL_LEN) else {
            return Ok(self.ids.intern(&HostKey::from_url(url)?));
        };
        let text = origin.get("http://".len()..).unwrap_or(origin);
        let hash = self.hasher.hash_one(text);
        if let Some(i) = self.table.find(hash, |i| self.entries[i as usize].text.as_str() == text) {
            return Ok(self.entries[i as usize].id);
        }
        let key = match plain_origin_key(origin) {
            Some(key) => key,
            None => HostKey::from_parsed_url(url)?,
        };
        let id = self.ids.intern(&key);
        if self.entries.len() >= Self::LIMIT {
            self.entries.clear();
            self.table.clear();
        }
        let OriginCache { entries, table, hasher, .. } = self;
        let at = entries.len() as u32;
        entries.push(Origin { text: InlineText::new(text), id });
        table.insert(hash, at, &|i| hasher.hash_one(entries[i as usize].text.as_str()));
        Ok(id)
    }

    /// The host key of `url`: what [`HostKey::from_url`] gives, errors included.
    pub fn key_of(&mut self, url: &str) -> Result<HostKey, Error> {
        let id = self.id_of(url)?;
        match self.ids.key(id) {
            Some(key) => Ok(key.clone()),
            None => HostKey::from_url(url), // not reached: every id comes from this interner
        }
    }

    /// The interned keys (ids from [`OriginCache::id_of`], and any key interned directly).
    pub fn ids(&self) -> &Interner {
        &self.ids
    }

    /// The interned keys, to intern a key known without a URL.
    pub fn ids_mut(&mut self) -> &mut Interner {
        &mut self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn the_origin_cache_gives_what_parsing_gives() {
        let mut cache = OriginCache::default();
        for url in [
            "http://example.com/a",
            "http://example.com/b?c",
            "http://example.com",
            "http://example.com?x",
            "HTTP://EXAMPLE.com./x",
            "https://example.com:443/",
            "https://example.com:8443/",
            "http://user@example.com/",
            "http://exa mple.com/",
            "http://b\u{fc}cher.de/",
            "http://example.com\\evil.com/",
            "http://[::1]:8080/x",
            "ftp://example.com/",
            // plain spellings read without the parser, and their neighbours that must go to it
            "http://1.example/",
            "http://a.1/",
            "http://a.0x1f/",
            "http://a.b.c.d-e.example/p",
            "http://-a-.example:0080/",
            "https://a.example:0443/",
            "https://a.example:80/",
            "http://a.example.:/",
            "http://a.example..:8080/",
            "http://a..b/",
            "http://.a/",
            "http://a.example:65535/",
            "http://a.example:65536/",
            "http://a.example:99999/",
            "http://a.example:000080/",
            "http://xn--bcher-kva.de/",
            "http://xn--zz.de/",
            "http://a.xn--/",
            "http://A.example/",
            "http://a_b.example/",
            "http://a%41.example/",
            "http://127.0.0.1:8080/",
            "http://a.example:8o/",
            "http://a.example:0/",
            "http://a.example:00/",
            "http://a.example:00081/",
            // the same authority under either scheme: a different key when the port is one scheme's default
            "http://example.com:443/",
            "http://example.com:80/",
            "https://example.com:80/",
            "https://example.com/",
            // texts kept inline and on the heap (22 and 23 bytes after `http://`)
            "http://a234567890.example.com/",
            "http://a2345678901.example.com/",
            "https://a23456789.example.com/",
            "https://a234567890.example.com/",
        ] {
            for _ in 0..2 {
                assert_eq!(cache.key_of(url), HostKey::from_parsed_url(url), "{url}");
                assert_eq!(cache.key_of(url), HostKey::from_url(url), "{url}");
            }
        }
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(cache.key_of(&long).is_err());
        // one id per host however spelled, stable when the origin cache starts over
        let id = cache.id_of("http://example.com/a").unwrap();
        assert_eq!(cache.id_of("HTTP://EXAMPLE.com.:80/z"), Ok(id));
        assert_eq!(cache.ids().key(id).map(HostKey::as_str), Some("example.com"));
        for i in 0..OriginCache::LIMIT + 1 {
            cache.id_of(&format!("http://h{i}.example/")).unwrap();
        }
        assert_eq!(cache.id_of("http://example.com/b"), Ok(id));
    }
}
