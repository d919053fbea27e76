import { isCustomerScope } from './customer-scopes';
import { checkRedirectUri, checkWebOrigin, type CheckedUrl } from './web-origins';

/** What a customer client is registered with, by the admin CLI or the console (contract 7, 11, 15). */
export interface ClientSettings {
  readonly type: 'browser' | 'native';
  readonly scopes: string[];
  readonly redirectUris: string[];
  readonly webOrigins: string[];
}

/** The setting a refusal is about; the CLI names it as an option, the API as a body field. */
export type ClientSettingField = 'type' | 'scopes' | 'redirect_uris' | 'web_origins';

export interface ClientSettingProblem {
  readonly field: ClientSettingField;
  readonly message: string;
}

export type CheckedClientSettings = { readonly settings: ClientSettings } | { readonly problem: ClientSettingProblem };

class Refused extends Error {
  constructor(readonly problem: ClientSettingProblem) {
    super(problem.message);
  }
}

/** A URL as a refusal may quote it: any userinfo masked, so a password is never echoed. */
export function withoutUserinfo(value: string): string {
  return value.replace(/\/\/[^/?#]*@/, '//…@');
}

/** The checked URL, or a refusal naming the value. */
function accepted(field: ClientSettingField, value: string, checked: CheckedUrl): string {
  if ('problem' in checked) throw new Refused({ field, message: `${withoutUserinfo(value)} ${checked.problem}` });
  return checked.url;
}

/**
 * The one set of rules for a customer client's settings, shared by `client create` and the
 * console's POST/PATCH of a client (contract 15), checked before anything is written:
 * - type `browser` or `native` (confidential clients are the control plane's alone);
 * - scopes: unique values of the customer scopes;
 * - redirect URIs: http(s), never a fragment or userinfo, https in production beyond loopback
 *   (checkRedirectUri, issue 22 point 6);
 * - web origins: browser clients only, canonical origins, https in production beyond loopback;
 * - a browser client needs scopes and a redirect URI, or it could never complete a flow.
 */
export function checkClientSettings(
  given: {
    readonly type: string;
    readonly scopes: readonly string[];
    readonly redirectUris: readonly string[];
    readonly webOrigins: readonly string[];
  },
  production: boolean,
): CheckedClientSettings {
  try {
    const { type } = given;
    if (type !== 'browser' && type !== 'native')
      throw new Refused({ field: 'type', message: 'must be browser or native' });
    if (given.scopes.some((s) => !isCustomerScope(s)) || new Set(given.scopes).size !== given.scopes.length)
      throw new Refused({ field: 'scopes', message: 'must be unique values of: openid profile email offline_access' });
    const redirectUris = given.redirectUris.map((u) => accepted('redirect_uris', u, checkRedirectUri(u, production)));
    if (given.webOrigins.length > 0 && type !== 'browser')
      throw new Refused({ field: 'web_origins', message: 'only browser clients have web origins' });
    const webOrigins = [
      ...new Set(given.webOrigins.map((o) => accepted('web_origins', o, checkWebOrigin(o, production)))),
    ];
    if (type === 'browser' && (given.scopes.length === 0 || redirectUris.length === 0))
      throw new Refused({ field: 'redirect_uris', message: 'a browser client needs scopes and a redirect URI' });
    return { settings: { type, scopes: [...given.scopes], redirectUris, webOrigins } };
  } catch (err) {
    if (err instanceof Refused) return { problem: err.problem };
    throw err;
  }
}
