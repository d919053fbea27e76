import { int, obj, str, type Schema } from './schema';

/** The control-plane token endpoint's answer (contract 3). */
export const TOKEN_RESPONSE = obj({
  access_token: str(),
  token_type: str({ const: 'Bearer' }),
  expires_in: int(),
  refresh_token: str(),
  scope: str(),
  session_id: str({ pattern: '^ses_' }),
});

/** A customer token set (contract 6): refresh and ID tokens only for clients allowed them. */
export const GUEST_TOKEN_SET: Record<string, Schema> = {
  access_token: str(),
  token_type: str({ const: 'Bearer' }),
  expires_in: int(),
  refresh_token: str({ description: 'only when the client is allowed offline_access' }),
  id_token: str({ description: 'only when the client is allowed openid' }),
  scope: str(),
  session_id: str({ pattern: '^ses_' }),
};
const OPTIONAL_TOKENS = ['refresh_token', 'id_token'];

/** The required fields of an answer that carries a customer token set and `extra`. */
export const tokenSetRequired = (extra: string[]): string[] => [
  ...extra,
  ...Object.keys(GUEST_TOKEN_SET).filter((k) => !OPTIONAL_TOKENS.includes(k)),
];
