import { httpUrl, isCleartextOverNetwork } from '../../config/secure-transport';
import type { ProviderEndpoints } from '../../directory/identity-providers.repository';
import { AdminInputError } from '../admin-command';

const DISCOVERY_TIMEOUT_MS = 10_000;

type Discovery = Record<string, unknown>;

/**
 * Reads the issuer's OpenID Connect discovery document and checks what the flows rely on (contract
 * 14, OpenID Connect Discovery 1.0 section 4.3): the document names exactly this issuer; it has
 * authorization, token and JWKS endpoints (https in production); it offers the authorization code
 * flow, PKCE S256 when it lists methods at all, and a signed ID token; and its token endpoint takes
 * a client secret the way this provider will send it. Whether it names itself in authorization
 * responses (RFC 9207) is kept. Any failure is an input error: nothing is
 * stored.
 */
export async function readDiscovery(
  issuer: string,
  opts: { production: boolean; appleKey: boolean },
): Promise<ProviderEndpoints> {
  const doc = await fetchDiscovery(issuer);
  if (doc.issuer !== issuer)
    throw new AdminInputError(`--issuer: the discovery document names issuer ${String(doc.issuer)}, not ${issuer}`);
  const endpoint = (name: string): string => {
    const value = doc[name];
    const url = typeof value === 'string' ? httpUrl(value) : null;
    if (!url) throw new AdminInputError(`--issuer: the discovery document has no http(s) ${name}`);
    if (opts.production && isCleartextOverNetwork(url)) throw new AdminInputError(`--issuer: ${name} must use https`);
    return url.toString();
  };
  const list = (name: string): string[] | undefined => {
    const value = doc[name];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
  };
  const endpoints = {
    authorization_endpoint: endpoint('authorization_endpoint'),
    token_endpoint: endpoint('token_endpoint'),
    jwks_uri: endpoint('jwks_uri'),
  };
  if (!list('response_types_supported')?.includes('code'))
    throw new AdminInputError('--issuer: the issuer does not offer the authorization code flow');
  const pkce = list('code_challenge_methods_supported');
  if (pkce !== undefined && !pkce.includes('S256'))
    throw new AdminInputError('--issuer: the issuer does not accept PKCE S256');
  const algs = (list('id_token_signing_alg_values_supported') ?? []).filter((a) => a !== 'none');
  const alg = algs.includes('RS256') ? 'RS256' : algs[0];
  if (alg === undefined) throw new AdminInputError('--issuer: the issuer lists no ID token signing algorithm');
  const methods = list('token_endpoint_auth_methods_supported');
  const method = opts.appleKey
    ? 'client_secret_post'
    : methods === undefined || methods.length === 0 || methods.includes('client_secret_basic')
      ? 'client_secret_basic'
      : 'client_secret_post';
  if (methods !== undefined && methods.length > 0 && !methods.includes(method))
    throw new AdminInputError(`--issuer: the token endpoint takes neither client_secret_basic nor client_secret_post`);
  return {
    ...endpoints,
    token_endpoint_auth_method: method,
    id_token_signed_response_alg: alg,
    // RFC 9207 section 3: kept, so the callback refuses an answer that lacks `iss`.
    authorization_response_iss_parameter_supported: doc.authorization_response_iss_parameter_supported === true,
  };
}

async function fetchDiscovery(issuer: string): Promise<Discovery> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    });
  } catch (err) {
    throw new AdminInputError(`--issuer: cannot read ${url}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) throw new AdminInputError(`--issuer: ${url} answered ${res.status}`);
  const doc: unknown = await res.json().catch(() => null);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new AdminInputError(`--issuer: ${url} is not a JSON object`);
  return doc as Discovery;
}
