import type { ClientEntity } from '../platform/database/entities/client.entity';

/**
 * The canonical origin of an `http(s)` URL given as an origin (scheme, host, optional port; no
 * path, query, fragment or credentials), or null. `https://Play.Example:443` becomes
 * `https://play.example`, the form browsers send in `Origin`, so a whole-string match suffices.
 */
export function canonicalWebOrigin(value: string): string | null {
  if (!/^https?:\/\/[^/?#@\s\\]+\/?$/i.test(value)) return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/**
 * A browser client's web origins (contract section 11): the origins of its redirect URIs plus
 * the ones registered with `--web-origins`. Other client types have none.
 */
export function webOriginsOf(client: Pick<ClientEntity, 'type' | 'redirectUris' | 'webOrigins'>): string[] {
  if (client.type !== 'browser') return [];
  const origins = new Set<string>();
  for (const uri of client.redirectUris) {
    try {
      origins.add(new URL(uri).origin);
    } catch {
      // A redirect URI is validated when registered; an unparsable one names no origin.
    }
  }
  for (const origin of client.webOrigins) origins.add(origin);
  return [...origins];
}
