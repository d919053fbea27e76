import type { Schema } from './schema';

/**
 * A route's OpenAPI operation, without `security` (derived from the route's policy) or `servers`
 * (derived from the host that serves its path): src/openapi assembles both.
 */
export interface OpenApiOperation {
  /** Stable, for client generators. */
  readonly operationId: string;
  /** One of the document's tags (src/openapi). */
  readonly tags: readonly string[];
  readonly summary: string;
  readonly parameters?: readonly Schema[];
  readonly requestBody?: Schema;
  readonly responses: Readonly<Record<string, Schema>>;
}
