import { FLOW } from './browser-flow.schema';
import { body, param, TENANT_PARAM } from '../http/openapi/requests';
import { error, media, ok, pick } from '../http/openapi/responses';
import { obj, str } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';
import { PROOF } from './guest.routes';

const tags = ['guest-proofs'];
const PROVIDER_PARAM = param('providerId', 'path');
const CALLBACK_PARAMS = ['code', 'state', 'error', 'error_description', 'error_uri', 'iss'];

/**
 * Sign-in with a tenant's OpenID Connect providers (contract 14): the browser flow (start, the
 * bounce of a page's link, the callback by query or Apple's form_post) and the native flow.
 */
export const PROVIDER_ROUTES = {
  start: {
    method: 'GET',
    path: '/t/:tenantId/providers/:providerId/start',
    policy: 'public',
    sideEffects: true,
    budget: 'provider-start',
    operation: {
      operationId: 'redirectToIdentityProvider',
      tags,
      summary:
        'Send the browser to an OpenID Connect provider of the tenant (authorization code, PKCE S256, state and nonce bound to the flow)',
      parameters: [TENANT_PARAM, PROVIDER_PARAM, param('client_id', 'query'), param('browser_flow_id', 'query')],
      responses: {
        302: { description: 'to the provider’s authorization endpoint' },
        ...pick(400, 403, 404, 429, 503),
      },
    },
  },
  startForPage: {
    method: 'POST',
    path: '/t/:tenantId/providers/:providerId/start',
    policy: 'public',
    budget: 'provider-start',
    status: 200,
    operation: {
      operationId: 'getIdentityProviderAuthorizeUrl',
      tags,
      summary:
        'Get the URL that sends the browser to the provider, for a page that opens it in a popup or a redirect (needs the flow cookie of a flow under way)',
      parameters: [TENANT_PARAM, PROVIDER_PARAM],
      requestBody: body(obj(FLOW)),
      responses: {
        200: ok(
          'the URL to open: a one-time bounce on the auth host (GET providers/go) that binds the flow to the browser following it',
          obj({ authorize_url: str() }),
        ),
        ...pick(400, 403, 404, 413, 429, 503),
      },
    },
  },
  /** A page's `authorize_url`: it writes a state for an anonymous caller, so it takes the start budget. */
  bounce: {
    method: 'GET',
    path: '/t/:tenantId/providers/go',
    policy: 'public',
    sideEffects: true,
    budget: 'provider-start',
    operation: {
      operationId: 'followIdentityProviderAuthorizeUrl',
      tags,
      summary: 'Follow a page’s authorize URL: bind the flow to this browser, then go to the provider',
      parameters: [TENANT_PARAM, param('handle', 'query')],
      responses: {
        302: {
          description:
            'to the provider’s authorization endpoint; sets a first-party HttpOnly cookie (`__Host-svc_idp_…`, SameSite=Lax, ten minutes) that the callback requires',
        },
        400: error('invalid_request: an unknown, used or malformed handle'),
        ...pick(404, 429, 503),
      },
    },
  },
  callback: {
    method: 'GET',
    path: '/t/:tenantId/providers/callback',
    policy: 'public',
    sideEffects: true,
    operation: {
      operationId: 'identityProviderCallback',
      tags,
      summary:
        'OpenID Connect provider callback: exchanges the code and checks the ID token (JWKS signature, iss, aud, exp, nonce)',
      parameters: [TENANT_PARAM, ...CALLBACK_PARAMS.map((name) => param(name, 'query', name === 'state'))],
      responses: {
        302: {
          description:
            'to the client’s redirect URI with proof_id and expires_in as query parameters (the proof is bound to the flow cookie), or with error=access_denied|temporarily_unavailable|server_error',
        },
        ...pick(400, 404, 503),
      },
    },
  },
  formPostCallback: {
    method: 'POST',
    path: '/t/:tenantId/providers/callback',
    policy: 'public',
    operation: {
      operationId: 'identityProviderFormPostCallback',
      tags,
      summary:
        'The same callback by response_mode=form_post (Sign in with Apple): sent on as a GET, where the browser binding is checked',
      parameters: [TENANT_PARAM],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': media(
            obj(
              {
                ...Object.fromEntries(CALLBACK_PARAMS.map((name) => [name, str()])),
                user: str({ description: 'Apple: name and email, first authorization only (not used)' }),
                id_token: str({ description: 'not used: the ID token comes from the code exchange' }),
              },
              ['state'],
            ),
          ),
        },
      },
      responses: {
        303: { description: 'to GET providers/callback with code, state, error and iss' },
        ...pick(400, 404),
      },
    },
  },
  nativeToken: {
    method: 'POST',
    path: '/t/:tenantId/providers/:providerId/token',
    policy: 'public',
    budget: 'provider-token',
    status: 200,
    operation: {
      operationId: 'signInWithProviderIdToken',
      tags,
      summary:
        'Native sign-in: check an ID token the platform’s own SDK obtained (aud the provider’s client id or one of its native client ids; nonce when given) and get a provider proof',
      parameters: [TENANT_PARAM, PROVIDER_PARAM],
      requestBody: body(
        obj(
          {
            ...FLOW,
            id_token: str({ description: 'the provider’s ID token (a JWT)' }),
            nonce: str({ description: 'the nonce the app gave the provider’s SDK, if any' }),
          },
          ['client_id', 'browser_flow_id', 'id_token'],
        ),
      ),
      responses: {
        200: ok('provider proof', PROOF),
        400: error('invalid_grant (the ID token failed a check or was used already) or invalid_request'),
        ...pick(403, 404, 413, 429, 503),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
