/**
 * The management API's console operations (contract 15), built with the helpers of
 * openapi-document.ts, which hands them in so this file holds only these operations.
 */
type Schema = Record<string, unknown>;

export interface PathHelpers {
  readonly op: (summary: string, security: Schema[], responses: Record<string, Schema>, extra?: Schema) => Schema;
  readonly body: (schema: Schema) => Schema;
  readonly ok: (description: string, schema: Schema) => Schema;
  readonly error: (description: string) => Schema;
  readonly pick: (...codes: Array<400 | 401 | 403 | 404 | 413 | 429 | 503>) => Record<string, Schema>;
  readonly param: (name: string, where: 'query' | 'path', required?: boolean) => Schema;
  readonly str: (extra?: Schema) => Schema;
  readonly int: (extra?: Schema) => Schema;
  readonly obj: (properties: Record<string, Schema>, required?: string[]) => Schema;
  readonly bearer: Schema[];
}

const strings = (h: PathHelpers, description: string): Schema => ({ type: 'array', items: h.str(), description });

/** The client object of contract 15: never a secret. */
export function clientSchema(h: PathHelpers): Schema {
  return h.obj({
    client_id: h.str({ pattern: '^cli_' }),
    name: h.str(),
    type: h.str({ enum: ['browser', 'native'] }),
    enabled: { type: 'boolean' },
    scopes: strings(h, 'of openid, profile, email, offline_access'),
    redirect_uris: strings(h, 'https (http on loopback outside production); no fragment or userinfo'),
    web_origins: strings(
      h,
      'origins that may call the tenant API by CORS (redirect URIs’ origins plus registered ones)',
    ),
  });
}

/** Request and response shapes shared by the management API and the BFF's proxy of it. */
export function consoleSchemas(h: PathHelpers) {
  const client = clientSchema(h);
  return {
    createClient: h.obj({
      name: h.str({ maxLength: 100 }),
      type: h.str({ enum: ['browser', 'native'] }),
      scopes: strings(h, 'unique values of openid, profile, email, offline_access'),
      redirect_uris: strings(h, 'a browser client needs at least one'),
      web_origins: strings(h, 'browser clients only'),
    }),
    updateClient: h.obj(
      {
        name: h.str({ maxLength: 100 }),
        enabled: { type: 'boolean' },
        scopes: strings(h, 'unique values of openid, profile, email, offline_access'),
        redirect_uris: strings(h, 'replaces the list'),
        web_origins: strings(h, 'replaces the list; browser clients only'),
      },
      [],
    ),
    client: h.obj({ client: client }),
  };
}

/** 403 of a tenant route: no membership (existence not revealed), a role too low, or no tenant:write. */
const forbiddenOf = (h: PathHelpers): Schema =>
  h.error('forbidden (no membership, a role below the action’s, or a write without the tenant:write scope)');

export function consoleManagementPaths(h: PathHelpers): Record<string, Record<string, Schema>> {
  const s = consoleSchemas(h);
  const tenant = h.param('id', 'path');
  const writeErrors = { ...h.pick(400, 401), 403: forbiddenOf(h), ...h.pick(413, 503) };
  return {
    '/management/tenants/{id}/clients/{clientId}': {
      patch: h.op(
        'Change a client (admin or owner; tenant:write); audited as console.client.update',
        h.bearer,
        {
          200: h.ok('the client as changed', s.client),
          ...writeErrors,
          404: h.error('not_found: no such client in this tenant'),
        },
        { parameters: [tenant, h.param('clientId', 'path')], requestBody: h.body(s.updateClient) },
      ),
    },
  };
}

/** POST beside the existing GET of /management/tenants/{id}/clients. */
export function createClientOperation(h: PathHelpers): Schema {
  const s = consoleSchemas(h);
  return h.op(
    'Create a browser or native client (admin or owner; tenant:write) under the admin CLI’s rules; audited as console.client.create',
    h.bearer,
    { 201: h.ok('the new client', s.client), ...h.pick(400, 401), 403: forbiddenOf(h), ...h.pick(413, 503) },
    { parameters: [h.param('id', 'path')], requestBody: h.body(s.createClient) },
  );
}
