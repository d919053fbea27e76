/**
 * Strict HTTP Basic parsing for OAuth client authentication (RFC 7617, RFC 6749 section 2.3.1):
 * canonical base64, exactly one split at the first `:`, both halves form-URL-decoded.
 * passport-http's own split drops everything after a second `:`, so it is not trusted for this.
 */
export function parseBasicCredentials(header: string | undefined): { clientId: string; secret: string } | null {
  if (typeof header !== 'string' || header.length > 2048) return null;
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!m?.[1]) return null;
  const raw = Buffer.from(m[1], 'base64');
  if (raw.toString('base64') !== m[1]) return null;
  const decoded = raw.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    return secret ? { clientId, secret } : null;
  } catch {
    return null;
  }
}
