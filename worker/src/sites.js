// The Public Suffix List of the gateway: the `tldts` package's (maintained, its data the list's own, the private
// section included), bundled with the Worker by worker-build (esbuild). The core asks it for the registrable
// domain of a host name (lowercase ASCII, no port, not an IP address: a host key's name) and checks the answer
// itself; here a throw, or anything but a string, is no answer, so nothing the library does can trap the module.
import { getDomain } from 'tldts';

const OPTIONS = {
  allowPrivateDomains: true, // a hosting platform's users are sites of their own (a.github.io, b.github.io)
  extractHostname: false, // a host name is given, never a URL
  detectIp: false, // the core never asks about an IP address
  validateHostname: false, // the core's host keys are valid names
};

/** The registrable domain of `name`, or undefined. */
export function registrableDomain(name) {
  try {
    const domain = getDomain(name, OPTIONS);
    return typeof domain === 'string' && domain.length > 0 ? domain : undefined;
  } catch (_) {
    return undefined;
  }
}
