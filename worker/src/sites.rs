//! Politeness groups at the gateway: which Durable Object decides a host. With `CRAWL_GROUP_BY=host` (the
//! default) every host has its own object, named by its host key. With `CRAWL_GROUP_BY=site` every host of one
//! site (its registrable domain, from the Public Suffix List, its private section included) is decided by the
//! site's object, named by the site's key (`*.example.com`): one core registry holds the site's own state beside
//! its hosts', so a departure waits for both and is charged to both in one step, with no call between objects.
//! A host without a site (an IP address, `localhost`, a name that is a public suffix itself) keeps an object of
//! its own.
//!
//! The list is the `tldts` package's (`sites.js`, bundled with the Worker), handed to the core once per isolate
//! (`install_public_suffix_list`, in wasm32); natively the core's own (the `psl` crate) answers.

use hostpace::{public_suffix_list, GroupBy, HostKey, Policy};

/// The key of the object that decides `host` when hosts are grouped by `group_by`: its site's under
/// [`GroupBy::Site`] when it has one, else its own. (Without a Public Suffix List no registry groups by site, so
/// none is asked: the host's own.)
pub fn object_key(group_by: GroupBy, host: &HostKey) -> HostKey {
    if group_by == GroupBy::Site {
        if let Some(site) = public_suffix_list().and_then(|lookup| host.site(lookup)) {
            return site;
        }
    }
    host.clone()
}

/// Whether an object named `key` decides hosts under `policy`: a site's key under [`GroupBy::Site`], a host's key
/// whose host is its own object ([`object_key`]). An object named otherwise is one a change of `CRAWL_GROUP_BY`
/// left behind: no host's call reaches it any more.
pub fn is_object_key(policy: &Policy, key: &HostKey) -> bool {
    match key.is_site() {
        true => policy.group_by == GroupBy::Site,
        false => object_key(policy.group_by, key) == *key,
    }
}

/// An object's key from its text: a host key, or a site's (`*.example.com`, as [`HostKey::site`] writes it).
pub fn parse_object_key(text: &str) -> Result<HostKey, String> {
    let Some(domain) = text.strip_prefix("*.") else {
        return HostKey::parse(text).map_err(|e| e.to_string());
    };
    // the domain is its own registrable domain here: the key is the one `HostKey::site` makes of it
    let itself: hostpace::RegistrableDomain = |name| Some(name.to_owned());
    let key = HostKey::parse(domain).ok().and_then(|key| key.site(itself));
    key.filter(|key| key.as_str() == text).ok_or_else(|| format!("{text:?} is not a site's key (*.example.com)"))
}

/// The registrable domain of `name` as `tldts` answers it (`getDomain` with the private section), or `None`. A
/// throw of the library is no answer (never a trap), and so is anything but a string; the core checks the answer
/// further ([`HostKey::site`]: a domain that is not `name` or a parent of it is none).
#[cfg(target_arch = "wasm32")]
fn registrable_domain(name: &str) -> Option<String> {
    js::registrable_domain(name)
}

#[cfg(target_arch = "wasm32")]
mod js {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(module = "/src/sites.js")]
    extern "C" {
        /// `sites.js`'s `registrableDomain`: a string or `undefined`, never a throw.
        #[wasm_bindgen(js_name = registrableDomain)]
        pub fn registrable_domain(name: &str) -> Option<String>;
    }
}

/// Hand the core the Public Suffix List (`tldts`'s), once per isolate: before it, a registry grouping hosts by
/// site cannot be made ([`hostpace::Error::NoPublicSuffixList`]). Later calls change nothing.
#[cfg(target_arch = "wasm32")]
pub fn install_public_suffix_list() {
    hostpace::set_public_suffix_list(registrable_domain);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(host: &str) -> HostKey {
        HostKey::parse(host).unwrap()
    }

    #[test]
    fn under_site_grouping_the_hosts_of_a_site_share_its_object_and_others_keep_their_own() {
        let by_site = Policy { group_by: GroupBy::Site, ..Policy::default() };
        for (host, object) in [
            ("www.example.com", "*.example.com"),
            ("img.example.com:8443", "*.example.com"),
            ("example.com", "*.example.com"),
            ("a.b.example.co.uk", "*.example.co.uk"),
            ("a.github.io", "*.a.github.io"),
            ("www.shop.hostpace.test:8080", "*.hostpace.test"),
            ("127.0.0.1:8080", "127.0.0.1:8080"),
            ("[::1]:8080", "[::1]:8080"),
            ("localhost:3000", "localhost:3000"),
            ("github.io", "github.io"),
        ] {
            assert_eq!(object_key(GroupBy::Site, &key(host)).as_str(), object, "{host}");
        }
        // only an object's own key is one it decides by
        for (key, yes) in [("*.example.com", true), ("example.com", false), ("127.0.0.1:8080", true)] {
            assert_eq!(is_object_key(&by_site, &parse_object_key(key).unwrap()), yes, "{key}");
        }
        assert!(!is_object_key(&Policy::default(), &parse_object_key("*.example.com").unwrap()));
        // by host (the default), each host is its own object
        for host in ["www.example.com", "img.example.com:8443", "127.0.0.1:8080"] {
            assert_eq!(object_key(GroupBy::Host, &key(host)), key(host));
        }
    }

    #[test]
    fn an_object_key_reads_back_from_its_text() {
        for text in ["*.example.com", "*.b.github.io", "www.example.com:8080", "127.0.0.1:8080", "[::1]:8080"] {
            assert_eq!(parse_object_key(text).unwrap().as_str(), text);
        }
        for bad in ["*.com", "*.Example.com", "*.example.com:80", "*.127.0.0.1", "*.", "*.*.example.com", "a b"] {
            assert!(parse_object_key(bad).is_err(), "{bad}");
        }
    }
}
