// The Public Suffix List of `groupBy: 'site'`: the registrable domain of a host name, by the `tldts` package (the
// list's ICANN and private sections). Not shipped as it is: scripts/build-pkg.sh bundles it with tldts into
// pkg/psl.js (ESM, minified, tldts's license kept), so the package imports nothing by a bare name. Each entry point
// hands `registrableDomain` to the wasm module (`setPublicSuffixList`), whose core calls it once per host it paces
// by site, and checks what it answers (an answer that is not the name or a parent of it is no site).
//
// The list is built on the first lookup, not when the file loads: `require` is bundled by esbuild as a module
// initialised on its first use, so a process that never groups hosts by site pays for reading this file and no
// more.

/** tldts's options: the private section too (`alice.github.io` is a site), and the argument is a host name. */
const OPTIONS = { allowPrivateDomains: true, extractHostname: false, mixedInputs: false };

let getDomain;

/** The registrable domain of `name` (a lowercase ASCII host name), or null when it has none. */
export function registrableDomain(name) {
  // eslint-disable-next-line no-undef -- bundled by esbuild (see above)
  getDomain ??= require('tldts').getDomain;
  return getDomain(name, OPTIONS);
}
