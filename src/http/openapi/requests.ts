import { SAMPLES } from './examples';
import { media } from './responses';
import { str, type Schema } from './schema';

/** A query or path parameter with an example. */
export const param = (name: string, where: 'query' | 'path', required = true): Schema => ({
  name,
  in: where,
  required,
  schema: str(),
  example: SAMPLES[name] ?? name,
});

/** A required request body: JSON, or JSON and a form for the OAuth endpoints (RFC 6749 takes forms). */
export const body = (schema: Schema, form = false): Schema => ({
  required: true,
  content: form
    ? { 'application/json': media(schema), 'application/x-www-form-urlencoded': media(schema) }
    : { 'application/json': media(schema) },
});

/** The customer tenant of every `/t/:tenantId/…` route. */
export const TENANT_PARAM = param('tenantId', 'path');
