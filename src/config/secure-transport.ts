import { isIP } from 'node:net';

/**
 * Production refuses cleartext wherever a URL would carry a secret or a credentialed origin
 * (issue 22, point 6): origins whose cookies and tokens the service sets, the BFF's way to the
 * API (it presents the console client secret), the chat platform's authorize and API URLs (codes
 * and the tenant's client secret), client redirect URIs (codes and proofs) and web origins (CORS
 * with credentials). Loopback stays allowed: the traffic never leaves the machine, and browsers
 * treat `http://localhost` and `http://127.0.0.1` as secure contexts (contract section 8).
 */
export const HTTPS_IN_PRODUCTION =
  'must use https when NODE_ENV=production (http only for localhost, 127.0.0.0/8 or [::1])';

/** localhost, an address of 127.0.0.0/8, or ::1, as `URL.hostname` spells them. */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** The text as a URL when it is an absolute http or https URL; null for anything else. */
export function httpUrl(text: string): URL | null {
  const url = URL.parse(text);
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url : null;
}

/** Whether the URL would travel in cleartext beyond this machine: `http:` to a non-loopback host. */
export function isCleartextOverNetwork(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopbackHostname(url.hostname);
}
