import { exampleOf } from './examples';
import { int, ref, str, type Schema } from './schema';

/** A media type object: the schema and an example that satisfies it. */
export const media = (schema: Schema): Schema => ({ schema, example: exampleOf(schema) });
export const json = (schema: Schema): Schema => ({ content: { 'application/json': media(schema) } });

/** A JSON answer. */
export const ok = (description: string, schema: Schema): Schema => ({ description, ...json(schema) });

/** An error response; its example's code is the first word of the description. */
export const error = (description: string): Schema => ({
  description,
  content: {
    'application/json': {
      schema: ref('Error'),
      example: { error: /^[a-z_]+/.exec(description)?.[0] ?? 'invalid_request', error_description: description },
    },
  },
});

export const html = (description: string, example: string): Schema => ({
  description,
  content: { 'text/html': { schema: str(), example } },
});

/** A sign-in asset or console asset: script, stylesheet or icon by name. */
export const ASSET: Schema = {
  description: 'asset',
  content: {
    'text/javascript': { schema: str(), example: '"use strict";' },
    'text/css': { schema: str(), example: 'body { margin: 0; }' },
    'image/svg+xml': { schema: str(), example: '<svg xmlns="http://www.w3.org/2000/svg"/>' },
  },
};

/** The contract's error answers (section 2), shared by every route that can give them. */
export const ERRORS = {
  400: error('invalid_request (malformed body, unknown fields, wrong content type)'),
  401: error('unauthorized or invalid_client'),
  403: error('forbidden (wrong Origin, missing flow cookie, no membership)'),
  404: error('not_found'),
  405: {
    ...error('method_not_allowed: HEAD on a link that works once, which HEAD would spend'),
    headers: { Allow: { schema: str({ const: 'GET' }) } },
  },
  413: error('payload_too_large (over 16 KiB)'),
  429: { ...error('rate_limited'), headers: { 'Retry-After': { schema: int() } } },
  503: error('temporarily_unavailable (a dependency is unavailable; nothing was issued)'),
};

export type ErrorStatus = keyof typeof ERRORS;

export const pick = (...codes: ErrorStatus[]): Record<string, Schema> =>
  Object.fromEntries(codes.map((c) => [String(c), ERRORS[c]]));
