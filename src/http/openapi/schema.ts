/**
 * Builders of OpenAPI 3.1 schema objects (the JSON Schema 2020-12 dialect). Every route states its
 * contract shapes with these, next to its handler (src/http/route.ts), so the document says
 * exactly what the contract says rather than what a generator infers.
 */
export type Schema = Record<string, unknown>;

export const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
export const int = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra });
/** A closed object: every property required unless `required` says otherwise, no other property. */
export const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});
/** A schema of the document's components (src/openapi). */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
