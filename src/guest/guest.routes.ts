import { FLOW, IDENTITY_PROVIDER, LINKED_IDENTITY } from './browser-flow.schema';
import { body, TENANT_PARAM } from '../http/openapi/requests';
import { error, ok, pick } from '../http/openapi/responses';
import { int, obj, str } from '../http/openapi/schema';
import { GUEST_TOKEN_SET, tokenSetRequired } from '../http/openapi/token-sets';
import type { RouteDeclaration } from '../http/route';

const tags = ['guests'];
const parameters = [TENANT_PARAM];
export const PROOF = obj({ proof_id: str({ pattern: '^prf_' }), expires_in: int() });
export const INTENT = obj({ intent_id: str({ pattern: '^lnk_' }), expires_in: int() });

/** Guests of a customer tenant, their linking intents and upgrade, and the player's own account (contract 6, 13). */
export const GUEST_ROUTES = {
  create: {
    method: 'POST',
    path: '/t/:tenantId/guest',
    policy: 'public',
    budget: 'guest-create',
    status: 201,
    operation: {
      operationId: 'createGuest',
      tags,
      summary: 'Create a guest (abuse limits and client/tenant checks; sets the flow cookie for a new flow)',
      parameters,
      requestBody: body(obj(FLOW)),
      responses: {
        201: ok(
          'guest token set',
          obj(
            { user_id: str({ pattern: '^usr_' }), upgrade_proof: PROOF, ...GUEST_TOKEN_SET },
            tokenSetRequired(['user_id', 'upgrade_proof']),
          ),
        ),
        400: error('invalid_request or invalid_client (unknown, disabled or foreign client)'),
        ...pick(403, 404, 413, 429, 503),
      },
    },
  },
  /** 201 for a new intent, 200 for a renewed one: the handler sets the status. */
  linkingIntent: {
    method: 'POST',
    path: '/t/:tenantId/guest/linking-intent',
    policy: 'bearer:guest',
    budget: 'linking-intent',
    operation: {
      operationId: 'createLinkingIntent',
      tags,
      summary: 'Create or renew the flow’s linking intent',
      parameters,
      requestBody: body(
        obj({ ...FLOW, upgrade_proof_id: str({ pattern: '^prf_' }) }, ['client_id', 'browser_flow_id']),
      ),
      responses: {
        201: ok('created', INTENT),
        200: ok('renewed (same session, client and flow)', INTENT),
        400: error('invalid_proof or invalid_request'),
        409: error('intent_conflict: another live intent holds the flow'),
        ...pick(401, 403, 404, 429, 503),
      },
    },
  },
  upgrade: {
    method: 'POST',
    path: '/t/:tenantId/guest/upgrade',
    policy: 'bearer:guest',
    status: 200,
    operation: {
      operationId: 'upgradeGuest',
      tags,
      summary: 'Attach a proven credential to the guest (needs the flow cookie too)',
      parameters,
      requestBody: body(obj({ ...FLOW, proof_id: str({ pattern: '^prf_' }) })),
      responses: {
        200: ok(
          'replacement token set, same user_id',
          obj(
            {
              user_id: str(),
              linked_identity: LINKED_IDENTITY,
              ...GUEST_TOKEN_SET,
            },
            tokenSetRequired(['user_id', 'linked_identity']),
          ),
        ),
        400: error('invalid_proof (any failed check of intent or proof)'),
        409: error('identity_in_use'),
        ...pick(401, 403, 404, 429, 503),
      },
    },
  },
  me: {
    method: 'GET',
    path: '/t/:tenantId/me',
    policy: 'bearer:guest',
    operation: {
      operationId: 'getOwnAccount',
      tags,
      summary: 'The player’s own account: guest or not, linked credentials (contract 13)',
      parameters,
      responses: {
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
                    provider: IDENTITY_PROVIDER,
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
    },
  },
  deleteMe: {
    method: 'DELETE',
    path: '/t/:tenantId/me',
    policy: 'bearer:guest',
    operation: {
      operationId: 'deleteOwnAccount',
      tags,
      summary:
        'Delete the player’s own account, guests included: erases it as the admin CLI’s `user delete` does and revokes every session; from a browser, the Origin must be a web origin of the token’s client (contract 13)',
      parameters,
      responses: {
        200: ok(
          'erased; the user’s access and refresh tokens are refused from now on',
          obj({ deleted: { const: true } }),
        ),
        ...pick(401, 403, 404, 503),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
