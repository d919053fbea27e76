import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';

/**
 * Checks an answer of the service against its OpenAPI 3.1 document: the operation that the
 * method, path and host select must document the status, the content type and a schema the body
 * satisfies. Every supertest request made through test-app.ts goes through `check()`, so the
 * document cannot drift from what the service answers (issue 24).
 */

type Schema = Record<string, unknown>;
interface MediaType {
  schema?: Schema;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  servers?: { url: string }[];
  responses?: Record<string, ResponseObject>;
}
type PathItem = Record<string, unknown> & { servers?: { url: string }[] };
export interface OpenApiDocument {
  servers?: { url: string }[];
  paths: Record<string, PathItem>;
  components?: { schemas?: Record<string, Schema> };
}

/** What the service answered, and to which request. */
export interface Exchange {
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly target: string;
  /** The host the service routed by (Host, or X-Forwarded-Host behind a trusted proxy). */
  readonly host: string;
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string | undefined;
}

/**
 * Requests the document does not describe, each with its reason. Anything not listed here and not
 * matched to an operation must get an answer the service gives before routing (see UNROUTED).
 */
const EXEMPT: readonly { method: string; reason: string }[] = [
  {
    method: 'OPTIONS',
    reason:
      'CORS preflights are answered by the CORS layer before routing (contract 11); OpenAPI describes operations, and their CORS headers are asserted by the CORS suites',
  },
];

/**
 * A request that matches no documented operation on its host is refused before any handler runs
 * (contract 1 and 10): 404 `not_found` for an unknown path or a path on the wrong host, or the
 * 400/413 of a body refused before routing. Always the error body of components.schemas.Error.
 */
const UNROUTED_STATUSES = new Set([400, 404, 413]);

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** One ajv for the worker: compiled schemas are shared by every app a suite starts. */
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
// Keywords the OpenAPI 3.1 schema dialect adds to JSON Schema 2020-12; annotations only.
ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
const compiled = new Map<string, ValidateFunction>();

interface Route {
  readonly path: string;
  readonly exact: RegExp;
  /** Express matches routes case-insensitively and ignores a trailing slash. */
  readonly loose: RegExp;
  readonly params: number;
  readonly item: PathItem;
}

export class OpenApiResponses {
  private readonly routes: Route[];
  private readonly componentsId: string;

  constructor(readonly document: OpenApiDocument) {
    const doc = document;
    this.routes = Object.entries(doc.paths)
      .map(([path, item]) => {
        const source = path
          .split(/(\{[^}]+\})/)
          .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('');
        return {
          path,
          exact: new RegExp(`^${source}$`),
          loose: new RegExp(`^${source}/?$`, 'i'),
          params: (path.match(/\{/g) ?? []).length,
          item,
        };
      })
      // OpenAPI: a concrete path wins over a templated one (the control plane's discovery
      // documents over the tenant's).
      .sort((a, b) => a.params - b.params);
    this.componentsId = registerComponents(doc.components?.schemas ?? {});
  }

  /** Every documented operation, for tests that compare the document with the route table. */
  operations(): { method: string; path: string; operation: Operation }[] {
    return Object.entries(this.document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.has(method))
        .map(([method, operation]) => ({ method, path, operation: operation as Operation })),
    );
  }

  /** Throws an error naming the operation, the status and what the document says, on any mismatch. */
  check(x: Exchange): void {
    const method = x.method.toUpperCase();
    if (EXEMPT.some((e) => e.method === method)) return;
    const path = x.target.split('?')[0] ?? '';
    // HEAD is answered by the GET route, without a body.
    const docMethod = method === 'HEAD' ? 'get' : method.toLowerCase();
    const exact = this.find(path, x.host, docMethod, 'exact');
    if (exact) return this.fail(x, exact.label, this.problem(exact.operation, x, method === 'HEAD'));
    const loose = this.find(path, x.host, docMethod, 'loose');
    // A path that differs from its template only by case or a trailing slash may be routed
    // (Express) or refused before routing (host routing compares prefixes exactly): either answer.
    const routed = loose ? this.problem(loose.operation, x, method === 'HEAD') : 'no documented operation';
    if (!routed) return;
    const unrouted = this.unroutedProblem(x);
    if (!unrouted) return;
    this.fail(
      x,
      loose?.label ?? 'no operation',
      loose ? `${routed}; nor is it a refusal before routing: ${unrouted}` : unrouted,
    );
  }

  private find(
    path: string,
    host: string,
    method: string,
    how: 'exact' | 'loose',
  ): { operation: Operation; label: string } | undefined {
    for (const route of this.routes) {
      if (!route[how].test(path)) continue;
      const operation = route.item[method] as Operation | undefined;
      if (!operation) continue;
      const servers = operation.servers ?? route.item.servers ?? this.document.servers ?? [];
      if (!servers.some((s) => new URL(s.url).host.toLowerCase() === host.toLowerCase())) continue;
      return { operation, label: `${operation.operationId ?? '?'} (${method.toUpperCase()} ${route.path})` };
    }
    return undefined;
  }

  /** What is wrong with the answer for this operation, or null. */
  private problem(operation: Operation, x: Exchange, head: boolean): string | null {
    const responses = operation.responses ?? {};
    const key = [String(x.status), `${String(x.status).charAt(0)}XX`, 'default'].find((k) => k in responses);
    if (!key) return `status ${x.status} is not documented (documented: ${Object.keys(responses).join(', ')})`;
    const response = responses[key] as ResponseObject;
    if (head) return null;
    const type = mediaType(x.contentType);
    const content = response.content;
    if (!content) {
      // A redirect's body is a courtesy for clients that do not follow Location; what a client
      // acts on is the status and Location, so only those are documented.
      if (x.status >= 300 && x.status < 400) return null;
      if (!type && !x.text) return null;
      return `response ${key} documents no body, but the service sent ${type ?? 'a body'}`;
    }
    if (!type) return `response ${key} documents ${Object.keys(content).join(', ')}, but no Content-Type was sent`;
    const mediaKey = Object.keys(content).find((k) => matchesMedia(k, type));
    if (!mediaKey)
      return `content type ${type} is not documented for ${key} (documented: ${Object.keys(content).join(', ')})`;
    const schema = content[mediaKey]?.schema;
    if (!schema) return null;
    return this.bodyProblem(schema, type, x.text ?? '', `${key} ${mediaKey}`);
  }

  private unroutedProblem(x: Exchange): string | null {
    if (!UNROUTED_STATUSES.has(x.status))
      return `status ${x.status} is not an answer before routing (${[...UNROUTED_STATUSES].join(', ')})`;
    const type = mediaType(x.contentType);
    if (type !== 'application/json') return `content type ${type ?? 'none'} is not the error body's application/json`;
    return this.bodyProblem({ $ref: '#/components/schemas/Error' }, type, x.text ?? '', 'the Error schema');
  }

  private bodyProblem(schema: Schema, type: string, text: string, where: string): string | null {
    let body: unknown = text;
    if (isJson(type)) {
      try {
        body = JSON.parse(text);
      } catch {
        return `the body is not JSON (${where})`;
      }
    }
    const validate = this.validator(schema);
    if (validate(body)) return null;
    return `the body does not match ${where}: ${formatErrors(validate.errors ?? [])}`;
  }

  private validator(schema: Schema): ValidateFunction {
    const key = `${this.componentsId} ${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(withAbsoluteRefs(schema, this.componentsId));
      compiled.set(key, validate);
    }
    return validate;
  }

  private fail(x: Exchange, label: string, problem: string | null): void {
    if (!problem) return;
    throw new Error(
      `OpenAPI: ${x.method.toUpperCase()} ${x.target} on ${x.host} answered ${x.status}, which ${label} does not document: ${problem}\n` +
        `  answer: ${x.status} ${x.contentType ?? '(no Content-Type)'} ${excerpt(x.text ?? '')}`,
    );
  }
}

/** The document's component schemas as one ajv schema, registered once per distinct content. */
function registerComponents(schemas: Record<string, Schema>): string {
  const id = `urn:svc-auth:openapi-components:${createHash('sha256').update(JSON.stringify(schemas)).digest('hex').slice(0, 16)}`;
  if (!ajv.getSchema(id)) ajv.addSchema({ $id: id, $defs: withAbsoluteRefs(schemas, id) }, id);
  return id;
}

/** `#/components/schemas/X` names a part of the OpenAPI document, not of the schema: point it at the registered components. */
function withAbsoluteRefs<T>(value: T, componentsId: string): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withAbsoluteRefs(v, componentsId)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
        ? `${componentsId}#/$defs/${v.slice('#/components/schemas/'.length)}`
        : withAbsoluteRefs(v, componentsId),
    ]),
  ) as T;
}

function mediaType(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

function matchesMedia(documented: string, actual: string): boolean {
  const doc = documented.toLowerCase();
  if (doc === '*/*' || doc === actual) return true;
  return doc.endsWith('/*') && actual.startsWith(doc.slice(0, -1));
}

function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function formatErrors(errors: ErrorObject[]): string {
  return errors
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    .join('; ');
}

function excerpt(text: string): string {
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
