import { FLOW, LINKED_IDENTITY } from './browser-flow.schema';
import { body, param, TENANT_PARAM } from '../http/openapi/requests';
import { error, ok, pick } from '../http/openapi/responses';
import { obj, str } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';
import { INTENT } from './guest.routes';

const tags = ['guests'];
const parameters = [TENANT_PARAM];

/** A full account links and unlinks credentials (contract 14). */
export const ME_IDENTITY_ROUTES = {
  /** 201 for a new intent, 200 for a renewed one: the handler sets the status. */
  linkingIntent: {
    method: 'POST',
    path: '/t/:tenantId/me/linking-intent',
    policy: 'bearer:guest',
    budget: 'linking-intent',
    operation: {
      operationId: 'createAccountLinkingIntent',
      tags,
      summary: 'A full account’s linking intent: as the guest’s, for a user that is not a guest (contract 14)',
      parameters,
      requestBody: body(obj(FLOW)),
      responses: {
        201: ok('created', INTENT),
        200: ok('renewed (same session, client and flow)', INTENT),
        400: error('invalid_proof (the caller is a guest, or the client is not the token’s) or invalid_request'),
        409: error('intent_conflict: another live intent holds the flow'),
        ...pick(401, 403, 404, 429, 503),
      },
    },
  },
  link: {
    method: 'POST',
    path: '/t/:tenantId/me/identities',
    policy: 'bearer:guest',
    status: 200,
    operation: {
      operationId: 'linkIdentity',
      tags,
      summary:
        'Link a proven credential to the full account (needs the flow cookie and the flow’s linking intent); the session stays; records identity.linked',
      parameters,
      requestBody: body(obj({ ...FLOW, proof_id: str({ pattern: '^prf_' }) })),
      responses: {
        200: ok(
          'linked',
          obj({
            user_id: str({ pattern: '^usr_' }),
            linked_identity: LINKED_IDENTITY,
          }),
        ),
        400: error('invalid_proof (any failed check of intent or proof)'),
        409: error('identity_in_use'),
        ...pick(401, 403, 404, 429, 503),
      },
    },
  },
  unlink: {
    method: 'DELETE',
    path: '/t/:tenantId/me/identities/:provider/:providerSubject',
    policy: 'bearer:guest',
    operation: {
      operationId: 'unlinkIdentity',
      tags,
      summary:
        'Remove one credential of the full account, never the last; records identity.unlinked. From a browser, the Origin must be a web origin of the token’s client',
      parameters: [TENANT_PARAM, param('provider', 'path'), param('providerSubject', 'path')],
      responses: {
        200: ok('removed', obj({ unlinked: { const: true } })),
        404: error('not_found: the account has no such credential'),
        409: error('last_identity: the account’s last credential that can sign in stays'),
        ...pick(401, 403, 503),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
