//! Sites: the registrable domain of a host name, from the Public Suffix List (its private section included), so
//! that the hosts of one site can be paced as one ([`crate::GroupBy::Site`]).
//!
//! The list is a maintained library's, never a copy kept here: natively the `psl` crate; in WebAssembly the shell
//! sets one with [`set_public_suffix_list`] (the npm package and the gateway pass the `tldts` package's), which
//! keeps the list (about 45 KB gzipped in any form) out of the wasm module.

use super::HostKey;
use std::sync::OnceLock;

/// A Public Suffix List lookup: the registrable domain of a lowercase ASCII host name (`www.example.co.uk` →
/// `example.co.uk`, `a.b.github.io` → `b.github.io`), or `None` when it has none (a public suffix itself, a single
/// label).
pub type RegistrableDomain = fn(&str) -> Option<String>;

static LIST: OnceLock<RegistrableDomain> = OnceLock::new();

/// Set the Public Suffix List lookup sites are read with, once per process (natively the `psl` crate's is the
/// default until one is set). Returns false, changing nothing, when one was already set or used.
pub fn set_public_suffix_list(lookup: RegistrableDomain) -> bool {
    LIST.set(lookup).is_ok()
}

/// The lookup in use: the one set, else natively the `psl` crate's; `None` in WebAssembly until a shell sets one.
pub fn public_suffix_list() -> Option<RegistrableDomain> {
    #[cfg(not(target_arch = "wasm32"))]
    return Some(*LIST.get_or_init(|| psl_domain));
    #[cfg(target_arch = "wasm32")]
    LIST.get().copied()
}

/// The `psl` crate's registrable domain of `name`.
#[cfg(not(target_arch = "wasm32"))]
fn psl_domain(name: &str) -> Option<String> {
    psl::domain_str(name).map(str::to_owned)
}

/// The text of the site key of `domain`: `*.example.com`, as an operator's rule names the site.
const SITE_PREFIX: &str = "*.";

impl HostKey {
    /// The key of the site this host belongs to (`*.example.com` for `www.example.com:8080`), by `lookup`; `None`
    /// for an IP address, `localhost`, a name that is a public suffix itself, or when `lookup` answers a single
    /// label or a domain that is not the name or a parent of it (so a faulty list never merges a host with one
    /// outside its own parents).
    pub fn site(&self, lookup: RegistrableDomain) -> Option<HostKey> {
        let key = self.as_str();
        if key.starts_with('[') || key.starts_with(SITE_PREFIX) {
            return None;
        }
        let name = key.split(':').next().unwrap_or(key);
        // an IPv4 address: its last label is a number (a WHATWG parser reads such a name as an address)
        if !name.contains('.') || name.rsplit('.').next().is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit())) {
            return None;
        }
        let domain = lookup(name)?;
        let parent =
            name.len() > domain.len() && name.ends_with(&domain) && name[..name.len() - domain.len()].ends_with('.');
        if !(parent || name == domain) || !domain.contains('.') || domain.starts_with('.') {
            return None;
        }
        Some(HostKey::from_normalized(&format!("{SITE_PREFIX}{domain}")))
    }

    /// True for a site's key (`*.example.com`, see [`HostKey::site`]).
    pub fn is_site(&self) -> bool {
        self.as_str().starts_with(SITE_PREFIX)
    }

    /// The site key of `domain` as a snapshot writes it (`*.example.com`), checked as a host name is.
    pub(crate) fn parse_site(text: &str) -> Result<HostKey, crate::Error> {
        let domain = text.strip_prefix(SITE_PREFIX).unwrap_or(text);
        let key = HostKey::parse(domain)?;
        if key.as_str() != domain || !domain.contains('.') || domain.contains(':') {
            let reason = format!("{text} is not a site's key (*.example.com)");
            return Err(crate::Error::InvalidSnapshot { reason });
        }
        Ok(HostKey::from_normalized(&format!("{SITE_PREFIX}{domain}")))
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn site(host: &str) -> Option<String> {
        HostKey::parse(host).unwrap().site(psl_domain).map(|k| k.as_str().to_owned())
    }

    #[test]
    fn a_site_is_the_registrable_domain_private_section_included() {
        assert_eq!(site("www.example.com").as_deref(), Some("*.example.com"));
        assert_eq!(site("img.example.com:8080").as_deref(), Some("*.example.com"));
        assert_eq!(site("example.com").as_deref(), Some("*.example.com"));
        assert_eq!(site("a.b.example.co.uk").as_deref(), Some("*.example.co.uk"));
        assert_eq!(site("a.b.github.io").as_deref(), Some("*.b.github.io"));
        for none in ["127.0.0.1", "127.0.0.1:8080", "[::1]:80", "localhost", "localhost:3000", "github.io", "co.uk"] {
            assert_eq!(site(none), None, "{none}");
        }
    }

    #[test]
    fn a_faulty_list_never_merges_unrelated_hosts() {
        let key = HostKey::parse("www.example.com").unwrap();
        for answer in ["other.com", "ample.com", "com", ".example.com", "www.example.com.evil"] {
            let lookup: RegistrableDomain = match answer {
                "other.com" => |_| Some("other.com".into()),
                "ample.com" => |_| Some("ample.com".into()),
                "com" => |_| Some("com".into()),
                ".example.com" => |_| Some(".example.com".into()),
                _ => |_| Some("www.example.com.evil".into()),
            };
            assert_eq!(key.site(lookup), None, "{answer}");
        }
    }

    #[test]
    fn a_site_key_reads_back_from_its_text() {
        let key = HostKey::parse("www.example.com").unwrap().site(psl_domain).unwrap();
        assert_eq!(HostKey::parse_site(key.as_str()), Ok(key));
        for bad in ["*.com", "*.Example.com", "*.example.com:80", "*.[::1]"] {
            assert!(HostKey::parse_site(bad).is_err(), "{bad}");
        }
    }
}
