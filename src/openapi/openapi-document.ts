import type { AppConfig } from '../config/config';
import { CLIENT_ID_PATTERN, ID_PATTERN } from '../platform/crypto/ids';
import { consoleManagementPaths, createClientOperation, type PathHelpers } from './console-management-paths';

/**
 * The OpenAPI 3.1 description of every public endpoint (contract sections 2–6). Written by hand
 * from the contract rather than generated, so it states the contract's exact shapes; a test
 * checks that it lists exactly the routes the service mounts.
 */
type Schema = Record<string, unknown>;

const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
const int = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra });
const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Sample values by field name, so that every example reads like a real exchange. */
const SAMPLES: Record<string, unknown> = {
  access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImVzLTEifQ.eyJzdWIiOiJ1c3JfMSJ9.c2ln',
  id_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImVzLTEifQ.eyJzdWIiOiJ1c3JfMSJ9.c2ln',
  refresh_token: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg.3.bWFjLW9mLXRoZS10b2tlbg',
  token_type: 'Bearer',
  expires_in: 300,
  scope: 'openid offline_access',
  session_id: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg',
  user_id: 'usr_eU9BZ3JvdW5kUGxheWVy',
  id: 'usr_eU9BZ3JvdW5kUGxheWVy',
  proof_id: 'prf_UHJvb2ZPZkFuRW1haWw',
  upgrade_proof_id: 'prf_VXBncmFkZVByb29mMQ',
  intent_id: 'lnk_TGlua2luZ0ludGVudDE',
  client_id: 'cli_web_game',
  clientId: 'cli_web_game',
  browser_flow_id: 'flw_QnJvd3NlckZsb3dJZDE',
  flow_id: 'flw_Q29uc29sZUZsb3dJZDE',
  email: 'player@example.com',
  code: '123456',
  grant_type: 'refresh_token',
  token: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg.3.bWFjLW9mLXRoZS10b2tlbg',
  token_type_hint: 'refresh_token',
  provider: 'email',
  provider_subject: 'player@example.com',
  redirect_to:
    'https://console.example/api/auth/callback?code=Y29kZQ&state=c3RhdGU&iss=https%3A%2F%2Fauth.example%2Ft%2Fcontrol-plane',
  authorize_url: 'https://discord.com/oauth2/authorize?response_type=code&client_id=123&state=c3RhdGU',
  name: 'Acme Games',
  role: 'owner',
  status: 'active',
  created_at: '2026-01-01T00:00:00.000Z',
  type: 'browser',
  enabled: true,
  scopes: ['openid', 'offline_access'],
  web_origins: ['https://play.acme.example'],
  revoked: true,
  error: 'invalid_request',
  error_description: 'The request is malformed.',
  email_verified: true,
  tenantId: 'acme',
  state: 'c3RhdGUtZnJvbS10aGUtc2VydmljZQ',
  response_type: 'code',
  redirect_uri: 'https://console.example/api/auth/callback',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  error_uri: 'https://discord.com/developers/docs',
};

/** An example that satisfies `schema`: sample values by name, else the schema's own constraints. */
function exampleOf(schema: Schema, name = ''): unknown {
  if (schema.$ref === '#/components/schemas/Revoked') return { revoked: true };
  if (schema.$ref === '#/components/schemas/Ready') return { status: 'ready', checks: { postgres: 'up', redis: 'up' } };
  if (schema.$ref === '#/components/schemas/NotReady')
    return {
      error: 'temporarily_unavailable',
      error_description: 'A dependency is unavailable.',
      checks: { postgres: 'up', redis: 'down' },
    };
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum))
    return SAMPLES[name] !== undefined && schema.enum.includes(SAMPLES[name]) ? SAMPLES[name] : schema.enum[0];
  if (schema.type === 'object' && schema.properties) {
    return Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, exampleOf(v, k)]),
    );
  }
  if (schema.type === 'object') return {};
  if (SAMPLES[name] !== undefined) return SAMPLES[name];
  if (schema.type === 'array') return [exampleOf(schema.items as Schema)];
  if (schema.type === 'integer') return 600;
  if (schema.type === 'boolean') return true;
  if (Array.isArray(schema.type)) return null;
  return 'text';
}

const media = (schema: Schema): Schema => ({ schema, example: exampleOf(schema) });
const json = (schema: Schema): Schema => ({ content: { 'application/json': media(schema) } });
/** An error response; its example's code is the first word of the description. */
const error = (description: string): Schema => ({
  description,
  content: {
    'application/json': {
      schema: ref('Error'),
      example: { error: /^[a-z_]+/.exec(description)?.[0] ?? 'invalid_request', error_description: description },
    },
  },
});
const ok = (description: string, schema: Schema): Schema => ({ description, ...json(schema) });
const html = (description: string, example: string): Schema => ({
  description,
  content: { 'text/html': { schema: str(), example } },
});
/** A query or path parameter with an example. */
const param = (name: string, where: 'query' | 'path', required = true): Schema => ({
  name,
  in: where,
  required,
  schema: str(),
  example: SAMPLES[name] ?? name,
});

const ERRORS = {
  400: error('invalid_request (malformed body, unknown fields, wrong content type)'),
  401: error('unauthorized or invalid_client'),
  403: error('forbidden (wrong Origin, missing flow cookie, no membership)'),
  404: error('not_found'),
  413: error('payload_too_large (over 16 KiB)'),
  429: { ...error('rate_limited'), headers: { 'Retry-After': { schema: int() } } },
  503: error('temporarily_unavailable (a dependency is unavailable; nothing was issued)'),
};

const pick = (...codes: (keyof typeof ERRORS)[]): Record<string, Schema> =>
  Object.fromEntries(codes.map((c) => [String(c), ERRORS[c]]));

const ROLE = str({ enum: ['owner', 'admin', 'developer', 'viewer'] });
const TENANT_LIST = obj({ tenants: { type: 'array', items: obj({ id: str(), name: str(), role: ROLE }) } });
const TENANT = obj({
  tenant: obj({ id: str(), name: str(), status: str(), created_at: str({ format: 'date-time' }) }),
});
const CLIENT_LIST = obj({
  clients: {
    type: 'array',
    items: obj({
      client_id: str(),
      name: str(),
      type: str({ enum: ['browser', 'native'] }),
      enabled: { type: 'boolean' },
      scopes: { type: 'array', items: str() },
      web_origins: {
        type: 'array',
        items: str(),
        description: 'origins that may call the tenant API by CORS (redirect URIs’ origins plus registered ones)',
      },
    }),
  },
});
/** A sign-in asset or console asset: script or stylesheet by name. */
const ASSET = {
  description: 'asset',
  content: {
    'text/javascript': { schema: str(), example: '"use strict";' },
    'text/css': { schema: str(), example: 'body { margin: 0; }' },
  },
};

const TOKEN_RESPONSE = obj({
  access_token: str(),
  token_type: str({ const: 'Bearer' }),
  expires_in: int(),
  refresh_token: str(),
  scope: str(),
  session_id: str({ pattern: '^ses_' }),
});

type Op = (summary: string, security: Schema[], responses: Record<string, Schema>, extra?: Schema) => Schema;
type Body = (schema: Schema, form?: boolean) => Schema;

const GUEST_TOKEN_SET = {
  access_token: str(),
  token_type: str({ const: 'Bearer' }),
  expires_in: int(),
  refresh_token: str({ description: 'only when the client is allowed offline_access' }),
  id_token: str({ description: 'only when the client is allowed openid' }),
  scope: str(),
  session_id: str({ pattern: '^ses_' }),
};
const OPTIONAL_TOKENS = ['refresh_token', 'id_token'];
const tokenSetRequired = (extra: string[]): string[] => [
  ...extra,
  ...Object.keys(GUEST_TOKEN_SET).filter((k) => !OPTIONAL_TOKENS.includes(k)),
];
const FLOW = {
  client_id: str({ pattern: CLIENT_ID_PATTERN.source }),
  browser_flow_id: str({ pattern: ID_PATTERN('flw').source }),
};
const tenantParam = param('tenantId', 'path');

/** The guest API of contract section 6 (auth host). */
function guestPaths(
  op: Op,
  body: Body,
  pick: (...c: (keyof typeof ERRORS)[]) => Record<string, Schema>,
  ok: (d: string, s: Schema) => Schema,
  none: Schema[],
): Record<string, Schema> {
  const guest = [{ guestBearer: [] }];
  const p = { parameters: [tenantParam] };
  const proof = obj({ proof_id: str({ pattern: '^prf_' }), expires_in: int() });
  return {
    '/t/{tenantId}/.well-known/openid-configuration': {
      get: op('Tenant discovery', none, { 200: ok('discovery document', { type: 'object' }), ...pick(404) }, p),
    },
    '/t/{tenantId}/.well-known/jwks.json': {
      get: op('Tenant public keys (ES256)', none, { 200: ok('JWK Set', { type: 'object' }), ...pick(404) }, p),
    },
    '/t/{tenantId}/guest': {
      post: op(
        'Create a guest (abuse limits and client/tenant checks; sets the flow cookie for a new flow)',
        none,
        {
          201: ok(
            'guest token set',
            obj(
              { user_id: str({ pattern: '^usr_' }), upgrade_proof: proof, ...GUEST_TOKEN_SET },
              tokenSetRequired(['user_id', 'upgrade_proof']),
            ),
          ),
          400: error('invalid_request or invalid_client (unknown, disabled or foreign client)'),
          ...pick(403, 404, 413, 429, 503),
        },
        { ...p, requestBody: body(obj(FLOW)) },
      ),
    },
    '/t/{tenantId}/guest/linking-intent': {
      post: op(
        'Create or renew the flow’s linking intent',
        guest,
        {
          201: ok('created', obj({ intent_id: str({ pattern: '^lnk_' }), expires_in: int() })),
          200: ok(
            'renewed (same session, client and flow)',
            obj({ intent_id: str({ pattern: '^lnk_' }), expires_in: int() }),
          ),
          400: error('invalid_proof or invalid_request'),
          409: error('intent_conflict: another live intent holds the flow'),
          ...pick(401, 403, 404, 429, 503),
        },
        {
          ...p,
          requestBody: body(
            obj({ ...FLOW, upgrade_proof_id: str({ pattern: '^prf_' }) }, ['client_id', 'browser_flow_id']),
          ),
        },
      ),
    },
    '/t/{tenantId}/guest/upgrade': {
      post: op(
        'Attach a proven credential to the guest (needs the flow cookie too)',
        guest,
        {
          200: ok(
            'replacement token set, same user_id',
            obj(
              {
                user_id: str(),
                linked_identity: obj({
                  provider: str({ enum: ['email', 'chat_platform'] }),
                  provider_subject: str(),
                  email: { type: ['string', 'null'] },
                }),
                ...GUEST_TOKEN_SET,
              },
              tokenSetRequired(['user_id', 'linked_identity']),
            ),
          ),
          400: error('invalid_proof (any failed check of intent or proof)'),
          409: error('identity_in_use'),
          ...pick(401, 403, 404, 429, 503),
        },
        { ...p, requestBody: body(obj({ ...FLOW, proof_id: str({ pattern: '^prf_' }) })) },
      ),
    },
    '/t/{tenantId}/me': {
      get: op(
        'The player’s own account: guest or not, linked credentials (contract 13)',
        guest,
        {
          200: ok(
            'the account; `email` only for email identities',
            obj({
              user: obj({
                id: str({ pattern: '^usr_' }),
                guest: { type: 'boolean' },
                created_at: str({ format: 'date-time' }),
                identities: {
                  type: 'array',
                  items: obj(
                    {
                      provider: str({ enum: ['email', 'chat_platform'] }),
                      provider_subject: str(),
                      email: str({ description: 'email identities only' }),
                    },
                    ['provider', 'provider_subject'],
                  ),
                },
              }),
            }),
          ),
          ...pick(401, 404, 503),
        },
        p,
      ),
      delete: op(
        'Delete the player’s own account, guests included: erases it as the admin CLI’s `user delete` does and revokes every session; from a browser, the Origin must be a web origin of the token’s client (contract 13)',
        guest,
        {
          200: ok(
            'erased; the user’s access and refresh tokens are refused from now on',
            obj({ deleted: { const: true } }),
          ),
          ...pick(401, 403, 404, 503),
        },
        p,
      ),
    },
    '/t/{tenantId}/email/start': {
      post: op(
        'Send an email verification code',
        none,
        { 202: ok('sent', obj({ expires_in: int() })), ...pick(400, 403, 404, 413, 429, 503) },
        { ...p, requestBody: body(obj({ ...FLOW, email: str({ format: 'email' }) })) },
      ),
    },
    '/t/{tenantId}/email/verify': {
      post: op(
        'Check the code; get a provider proof',
        none,
        {
          200: ok('provider proof', proof),
          400: error('invalid_code or invalid_request'),
          ...pick(403, 404, 413, 429, 503),
        },
        {
          ...p,
          requestBody: body(obj({ ...FLOW, email: str({ format: 'email' }), code: str({ pattern: '^\\d{6}$' }) })),
        },
      ),
    },
    '/t/{tenantId}/chat/start': {
      get: op(
        'Send the browser to the chat platform',
        none,
        { 302: { description: 'to the platform’s authorize URL with state' }, ...pick(400, 403, 404, 429, 503) },
        {
          parameters: [tenantParam, param('client_id', 'query'), param('browser_flow_id', 'query')],
        },
      ),
      post: op(
        'Get the URL that sends the browser to the chat platform, for a page that opens it in a popup or a redirect (needs the flow cookie of a flow under way)',
        none,
        {
          200: ok(
            'the URL to open: a one-time bounce on the auth host (GET chat/go) that binds the flow to the browser following it',
            obj({ authorize_url: str() }),
          ),
          ...pick(400, 403, 404, 413, 429, 503),
        },
        { ...p, requestBody: body(obj(FLOW)) },
      ),
    },
    '/t/{tenantId}/chat/go': {
      get: op(
        'Follow a page’s authorize URL: bind the flow to this browser, then go to the chat platform',
        none,
        {
          302: {
            description:
              'to the platform’s authorize URL with state; sets a first-party HttpOnly cookie (`__Host-svc_chat_…`, SameSite=Lax, ten minutes) that the callback requires',
          },
          400: error('invalid_request: an unknown, used or malformed handle'),
          ...pick(404, 429, 503),
        },
        { parameters: [tenantParam, param('handle', 'query')] },
      ),
    },
    '/t/{tenantId}/chat/callback': {
      get: op(
        'Chat platform callback',
        none,
        {
          302: {
            description:
              'to the client’s redirect URI with proof_id and expires_in as query parameters (the proof is bound to the flow cookie), or with error=access_denied|temporarily_unavailable|server_error when the platform reported an error, the browser is not the one bound to the state, or any step after the state failed',
          },
          ...pick(400, 404, 503),
        },
        {
          parameters: [
            tenantParam,
            param('code', 'query', false),
            param('state', 'query'),
            param('error', 'query', false),
            param('error_description', 'query', false),
            param('error_uri', 'query', false),
            param('iss', 'query', false),
          ],
        },
      ),
    },
    '/t/{tenantId}/sign-in': {
      post: op(
        'Sign in to the account that owns a proven credential',
        none,
        {
          200: ok('token set', obj({ user_id: str(), ...GUEST_TOKEN_SET }, tokenSetRequired(['user_id']))),
          400: error('invalid_proof or invalid_request'),
          ...pick(403, 404, 429, 503),
        },
        { ...p, requestBody: body(obj({ ...FLOW, proof_id: str({ pattern: '^prf_' }) })) },
      ),
    },
    '/t/{tenantId}/token': {
      post: op(
        'Rotating refresh for customer sessions. A browser client’s answer also sets its HttpOnly refresh cookie `__Host-svc_refresh_{tenantId}.{clientId}` (SameSite=None; Partitioned by CORS from a web origin, else Lax); a refusal with invalid_grant of the cookie’s token expires it (issue 22 finding 7)',
        none,
        {
          200: ok('token set', obj(GUEST_TOKEN_SET, tokenSetRequired([]))),
          400: error('invalid_grant, invalid_request, unsupported_grant_type, invalid_client'),
          ...pick(403, 404, 503),
        },
        {
          ...p,
          requestBody: body(
            obj(
              {
                grant_type: str({ const: 'refresh_token' }),
                refresh_token: str({ description: 'without it, the client’s refresh cookie; the body wins when both' }),
                client_id: str(),
              },
              ['grant_type', 'client_id'],
            ),
            true,
          ),
        },
      ),
    },
    '/t/{tenantId}/revoke': {
      post: op(
        'RFC 7009 revocation (200 for unknown tokens). Without `token`, the client’s refresh cookie is revoked and expired (issue 22 finding 7)',
        none,
        { 200: ok('done', obj({})), ...pick(400, 403, 404, 503) },
        {
          ...p,
          requestBody: body(
            obj(
              {
                token: str({ description: 'without it, the client’s refresh cookie' }),
                token_type_hint: str(),
                client_id: str(),
              },
              ['client_id'],
            ),
            true,
          ),
        },
      ),
    },
  };
}

const TAGS = [
  { name: 'health', description: 'Liveness and readiness, on every host.' },
  { name: 'documentation', description: 'This OpenAPI document, on the auth host.' },
  {
    name: 'control-plane',
    description: 'Sign-in of developers to the console: discovery, authorize, email code, tokens.',
  },
  { name: 'management', description: 'The management API: tenants and their clients, for members.' },
  {
    name: 'guests',
    description: 'Guest sessions of a customer tenant, linking intents, upgrade, and the player’s own account.',
  },
  { name: 'guest-proofs', description: 'Email and chat-platform proofs of a credential, and sign-in with one.' },
  { name: 'customer-tokens', description: 'A customer tenant’s discovery, keys, refresh and revocation.' },
  { name: 'console', description: 'The console page and its backend-for-frontend (console host).' },
];

/** Every operation's stable `operationId` and tag, for client generators. */
const OPERATIONS: Record<string, readonly [operationId: string, tag: string]> = {
  'get /healthz': ['getLiveness', 'health'],
  'get /readyz': ['getReadiness', 'health'],
  'get /openapi.json': ['getOpenApiDocument', 'documentation'],
  'get /t/control-plane/.well-known/openid-configuration': ['getControlPlaneDiscovery', 'control-plane'],
  'get /t/control-plane/.well-known/jwks.json': ['getControlPlaneJwks', 'control-plane'],
  'get /management-auth/authorize': ['authorize', 'control-plane'],
  'get /management-auth/assets/{name}': ['getSignInAsset', 'control-plane'],
  'post /management-auth/email/start': ['startManagementEmailSignIn', 'control-plane'],
  'post /management-auth/email/confirm': ['confirmManagementEmailSignIn', 'control-plane'],
  'post /management-auth/token': ['exchangeManagementToken', 'control-plane'],
  'get /management-auth/current': ['getCurrentManagementUser', 'control-plane'],
  'post /management-auth/revoke': ['revokeManagementSession', 'control-plane'],
  'post /management-auth/revoke-session': ['revokeManagementSessionById', 'control-plane'],
  'get /management/tenants': ['listTenants', 'management'],
  'get /management/tenants/{id}': ['getTenant', 'management'],
  'get /management/tenants/{id}/clients': ['listTenantClients', 'management'],
  'post /management/tenants/{id}/clients': ['createTenantClient', 'management'],
  'patch /management/tenants/{id}/clients/{clientId}': ['updateTenantClient', 'management'],
  'get /t/{tenantId}/.well-known/openid-configuration': ['getTenantDiscovery', 'customer-tokens'],
  'get /t/{tenantId}/.well-known/jwks.json': ['getTenantJwks', 'customer-tokens'],
  'post /t/{tenantId}/guest': ['createGuest', 'guests'],
  'post /t/{tenantId}/guest/linking-intent': ['createLinkingIntent', 'guests'],
  'post /t/{tenantId}/guest/upgrade': ['upgradeGuest', 'guests'],
  'get /t/{tenantId}/me': ['getOwnAccount', 'guests'],
  'delete /t/{tenantId}/me': ['deleteOwnAccount', 'guests'],
  'post /t/{tenantId}/email/start': ['startEmailVerification', 'guest-proofs'],
  'post /t/{tenantId}/email/verify': ['verifyEmailCode', 'guest-proofs'],
  'get /t/{tenantId}/chat/start': ['redirectToChatPlatform', 'guest-proofs'],
  'post /t/{tenantId}/chat/start': ['getChatPlatformAuthorizeUrl', 'guest-proofs'],
  'get /t/{tenantId}/chat/go': ['followChatAuthorizeUrl', 'guest-proofs'],
  'get /t/{tenantId}/chat/callback': ['chatPlatformCallback', 'guest-proofs'],
  'post /t/{tenantId}/sign-in': ['signInWithProof', 'guest-proofs'],
  'post /t/{tenantId}/token': ['refreshCustomerToken', 'customer-tokens'],
  'post /t/{tenantId}/revoke': ['revokeCustomerToken', 'customer-tokens'],
  'get /': ['getConsolePage', 'console'],
  'get /assets/{name}': ['getConsoleAsset', 'console'],
  'post /api/auth/start': ['startConsoleSignIn', 'console'],
  'get /api/auth/callback': ['consoleSignInCallback', 'console'],
  'get /api/auth/current': ['getConsoleUser', 'console'],
  'post /api/auth/sign-out': ['signOutOfConsole', 'console'],
  'get /api/management/tenants': ['proxyListTenants', 'console'],
  'get /api/management/tenants/{id}': ['proxyGetTenant', 'console'],
  'get /api/management/tenants/{id}/clients': ['proxyListTenantClients', 'console'],
};

/** Adds each operation's id and tag; an operation missing from OPERATIONS is a programming error. */
function withOperationIds(paths: Record<string, Record<string, Schema>>): Record<string, Record<string, Schema>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops).map(([method, operation]) => {
          const named = OPERATIONS[`${method} ${path}`];
          if (!named) throw new Error(`OpenAPI: no operationId for ${method} ${path}`);
          return [method, { operationId: named[0], tags: [named[1]], ...operation }];
        }),
      ),
    ]),
  );
}

export function openApiDocument(config: AppConfig): Record<string, unknown> {
  const auth = [{ url: config.authOrigin }];
  const consoleHost = [{ url: config.consoleOrigin }];
  const everyHost = [...auth, ...consoleHost];
  const op = (summary: string, security: Schema[], responses: Record<string, Schema>, extra: Schema = {}): Schema => ({
    summary,
    security,
    // Contract 2: a body may be malformed, of the wrong type or over 16 KiB on any route that takes one.
    responses: extra.requestBody ? { ...pick(400, 413), ...responses } : responses,
    ...extra,
  });
  const body = (schema: Schema, form = false): Schema => ({
    required: true,
    content: form
      ? { 'application/json': media(schema), 'application/x-www-form-urlencoded': media(schema) }
      : { 'application/json': media(schema) },
  });
  const none: Schema[] = [];
  const bearer = [{ managementBearer: [] }];
  const basic = [{ consoleClientBasic: [] }];
  const cookie = [{ consoleSession: [] }];
  const helpers: PathHelpers = { op, body, ok, error, pick, param, str, int, obj, bearer };
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc-auth',
      version: '1',
      description: 'Management sign-in, console BFF and guest authentication. Routing is by Host.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: auth,
    tags: TAGS,
    paths: withOperationIds({
      '/healthz': {
        get: op(
          'Liveness (every host)',
          none,
          { 200: ok('alive', obj({ status: str({ const: 'ok' }) })) },
          { servers: everyHost },
        ),
      },
      '/readyz': {
        get: op(
          'Readiness: PostgreSQL and Redis reachable, Redis not evicting (every host)',
          none,
          {
            200: ok('ready', ref('Ready')),
            503: ok('not ready: temporarily_unavailable with the checks', ref('NotReady')),
          },
          { servers: everyHost },
        ),
      },
      '/openapi.json': {
        get: op('This document (auth host)', none, {
          200: ok('the OpenAPI 3.1 document', {
            type: 'object',
            properties: { openapi: str({ const: '3.1.0' }), paths: { type: 'object' } },
            required: ['openapi', 'paths'],
          }),
        }),
      },
      '/t/control-plane/.well-known/openid-configuration': {
        get: op('Control-plane discovery', none, { 200: ok('discovery document', { type: 'object' }) }),
      },
      '/t/control-plane/.well-known/jwks.json': {
        get: op('Control-plane public keys (RS256)', none, { 200: ok('JWK Set', { type: 'object' }) }),
      },
      '/management-auth/authorize': {
        get: op(
          'Validate an authorization request and serve the hosted sign-in form',
          none,
          {
            200: html(
              'HTML sign-in form; sets __Host-svc_control_flow',
              '<!doctype html><html lang="en"><title>Sign in</title>…</html>',
            ),
            303: { description: 'Redirect to the callback with error, state and iss' },
            400: html(
              'HTML error page: unknown client or redirect URI, or a malformed request (never redirects)',
              '<!doctype html><html lang="en"><title>Sign-in error</title>…</html>',
            ),
            ...pick(429, 503),
          },
          {
            parameters: [
              'response_type',
              'client_id',
              'redirect_uri',
              'scope',
              'state',
              'code_challenge',
              'code_challenge_method',
            ].map((name) => param(name, 'query')),
          },
        ),
      },
      '/management-auth/assets/{name}': {
        get: op(
          'Script and stylesheet of the sign-in form',
          none,
          { 200: ASSET, 404: ERRORS[404] },
          { parameters: [param('name', 'path')] },
        ),
      },
      '/management-auth/email/start': {
        post: op(
          'Send a six-digit code (exact auth Origin and flow cookie)',
          [{ authOrigin: [], controlFlowCookie: [] }],
          {
            202: ok('sent (same answer for every address)', obj({ expires_in: int() })),
            ...pick(400, 403, 413, 429, 503),
          },
          {
            requestBody: body(
              obj({
                flow_id: str({ pattern: ID_PATTERN('flw').source }),
                email: str({ format: 'email', maxLength: 254 }),
              }),
            ),
          },
        ),
      },
      '/management-auth/email/confirm': {
        post: op(
          'Check the code and get the redirect to the callback',
          [{ authOrigin: [], controlFlowCookie: [] }],
          {
            200: ok('redirect_to carries code, state and iss', obj({ redirect_to: str({ format: 'uri' }) })),
            400: error('invalid_code or invalid_request'),
            ...pick(403, 413, 429, 503),
          },
          {
            requestBody: body(
              obj({ flow_id: str(), email: str({ format: 'email' }), code: str({ pattern: '^\\d{6}$' }) }),
            ),
          },
        ),
      },
      '/management-auth/token': {
        post: op(
          'Token endpoint: authorization_code (PKCE S256) and refresh_token grants',
          basic,
          {
            200: ok('token set', TOKEN_RESPONSE),
            400: error('invalid_request, invalid_grant or unsupported_grant_type (RFC 6749 5.2)'),
            401: { ...error('invalid_client'), headers: { 'WWW-Authenticate': { schema: str() } } },
            ...pick(413, 503),
          },
          {
            requestBody: body(
              obj(
                {
                  grant_type: str({ enum: ['authorization_code', 'refresh_token'] }),
                  code: str(),
                  redirect_uri: str(),
                  code_verifier: str(),
                  refresh_token: str(),
                },
                ['grant_type'],
              ),
              true,
            ),
          },
        ),
      },
      '/management-auth/current': {
        get: op('The signed-in developer', bearer, {
          200: ok(
            'user',
            obj({ user: obj({ id: str({ pattern: '^usr_' }), email: str(), email_verified: { const: true } }) }),
          ),
          401: {
            ...error('unauthorized'),
            headers: { 'WWW-Authenticate': { schema: str({ const: 'Bearer error="invalid_token"' }) } },
          },
          503: ERRORS[503],
        }),
      },
      '/management-auth/revoke': {
        post: op('Revoke the caller’s control-plane session', bearer, {
          200: ok('result', ref('Revoked')),
          401: ERRORS[401],
          503: ERRORS[503],
        }),
      },
      '/management-auth/revoke-session': {
        post: op(
          'Revoke a control-plane session by id',
          basic,
          { 200: ok('result', ref('Revoked')), ...pick(400, 401, 413, 503) },
          { requestBody: body(obj({ session_id: str({ pattern: '^ses_' }) })) },
        ),
      },
      '/management/tenants': {
        get: op('Active tenants of the caller’s current memberships', bearer, {
          200: ok('tenants', TENANT_LIST),
          401: ERRORS[401],
          503: ERRORS[503],
        }),
      },
      '/management/tenants/{id}': {
        get: op(
          'One tenant (membership required; 403 does not reveal existence)',
          bearer,
          {
            200: ok('tenant', TENANT),
            ...pick(401, 403, 503),
          },
          { parameters: [param('id', 'path')] },
        ),
      },
      '/management/tenants/{id}/clients': {
        get: op(
          'Clients of a tenant (membership required)',
          bearer,
          {
            200: ok('clients', CLIENT_LIST),
            ...pick(401, 403, 503),
          },
          { parameters: [param('id', 'path')] },
        ),
        post: createClientOperation(helpers),
      },
      ...consoleManagementPaths(helpers),
      ...guestPaths(op, body, pick, ok, none),
      '/': {
        get: op(
          'Console page (console host)',
          none,
          { 200: html('the console page', '<!doctype html><html lang="en"><title>Console</title>…</html>') },
          { servers: consoleHost },
        ),
      },
      '/assets/{name}': {
        get: op(
          'Console page assets (console host)',
          none,
          { 200: ASSET, 404: ERRORS[404] },
          { servers: consoleHost, parameters: [param('name', 'path')] },
        ),
      },
      '/api/auth/start': {
        post: op(
          'Start a console sign-in (exact console Origin)',
          [{ consoleOrigin: [] }],
          {
            303: { description: 'Redirect to the authorize endpoint; sets __Host-svc_control_flow' },
            ...pick(403, 429, 503),
          },
          { servers: consoleHost },
        ),
      },
      '/api/auth/callback': {
        get: op(
          'OAuth callback of the console',
          none,
          { 303: { description: 'Redirect to / or /?error=<code>; sets __Host-svc_console on success' } },
          { servers: consoleHost, parameters: [param('code', 'query', false), param('state', 'query', false)] },
        ),
      },
      '/api/auth/current': {
        get: op(
          'The signed-in developer, via the console session',
          cookie,
          {
            200: ok('user', obj({ user: obj({ id: str(), email: str(), email_verified: { type: 'boolean' } }) })),
            401: ERRORS[401],
            503: ERRORS[503],
          },
          { servers: consoleHost },
        ),
      },
      '/api/auth/sign-out': {
        post: op(
          'Sign out (exact console Origin)',
          cookie,
          { 204: { description: 'signed out; cookie expired' }, ...pick(401, 403, 503) },
          { servers: consoleHost },
        ),
      },
      '/api/management/tenants': {
        get: op(
          'Proxy of GET /management/tenants',
          cookie,
          { 200: ok('as upstream', TENANT_LIST), ...pick(401, 503) },
          { servers: consoleHost },
        ),
      },
      '/api/management/tenants/{id}': {
        get: op(
          'Proxy of GET /management/tenants/{id}',
          cookie,
          {
            200: ok('as upstream', TENANT),
            ...pick(401, 403, 503),
            404: error('not_found: an id that names no route under /api/management/ (contract 4)'),
          },
          { servers: consoleHost, parameters: [param('id', 'path')] },
        ),
      },
      '/api/management/tenants/{id}/clients': {
        get: op(
          'Proxy of GET /management/tenants/{id}/clients',
          cookie,
          { 200: ok('as upstream', CLIENT_LIST), ...pick(401, 403, 404, 503) },
          { servers: consoleHost, parameters: [param('id', 'path')] },
        ),
      },
    }),
    components: {
      schemas: {
        Error: obj({ error: str({ pattern: '^[a-z_]+$' }), error_description: str() }),
        Revoked: obj({ revoked: { type: 'boolean' } }),
        Ready: obj({ status: str({ const: 'ready' }), checks: ref('Checks'), warnings: ref('Warnings') }, [
          'status',
          'checks',
        ]),
        NotReady: obj(
          {
            error: str({ const: 'temporarily_unavailable' }),
            error_description: str(),
            checks: ref('Checks'),
            warnings: ref('Warnings'),
          },
          ['error', 'error_description', 'checks'],
        ),
        Checks: obj({ postgres: str({ enum: ['up', 'down'] }), redis: str({ enum: ['up', 'down'] }) }),
        Warnings: {
          type: 'array',
          items: str(),
          description: 'what the operator must clear, such as a Redis maxmemory-policy other than noeviction',
        },
      },
      securitySchemes: {
        managementBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RS256, aud urn:svc:management)' },
        guestBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (ES256, tenant issuer, client audience)' },
        consoleClientBasic: { type: 'http', scheme: 'basic' },
        consoleSession: { type: 'apiKey', in: 'cookie', name: '__Host-svc_console' },
        controlFlowCookie: { type: 'apiKey', in: 'cookie', name: '__Host-svc_control_flow' },
        authOrigin: { type: 'apiKey', in: 'header', name: 'Origin', description: `exactly ${config.authOrigin}` },
        consoleOrigin: { type: 'apiKey', in: 'header', name: 'Origin', description: `exactly ${config.consoleOrigin}` },
      },
    },
  };
}
