import { FLOW } from './browser-flow.schema';
import { body, param, TENANT_PARAM } from '../http/openapi/requests';
import { error, ok, pick } from '../http/openapi/responses';
import { int, obj, str } from '../http/openapi/schema';
import { GUEST_TOKEN_SET, tokenSetRequired } from '../http/openapi/token-sets';
import type { RouteDeclaration } from '../http/route';
import { PROOF } from './guest.routes';

const tags = ['guest-proofs'];
const parameters = [TENANT_PARAM];

/** Email and chat-platform proofs of a credential, and sign-in with one (contract 6, 11). */
export const GUEST_PROOF_ROUTES = {
  emailStart: {
    method: 'POST',
    path: '/t/:tenantId/email/start',
    policy: 'public',
    budget: 'email-start',
    status: 202,
    operation: {
      operationId: 'startEmailVerification',
      tags,
      summary: 'Send an email verification code',
      parameters,
      requestBody: body(obj({ ...FLOW, email: str({ format: 'email' }) })),
      responses: { 202: ok('sent', obj({ expires_in: int() })), ...pick(400, 403, 404, 413, 429, 503) },
    },
  },
  emailVerify: {
    method: 'POST',
    path: '/t/:tenantId/email/verify',
    policy: 'public',
    budget: 'email-verify',
    status: 200,
    operation: {
      operationId: 'verifyEmailCode',
      tags,
      summary: 'Check the code; get a provider proof',
      parameters,
      requestBody: body(obj({ ...FLOW, email: str({ format: 'email' }), code: str({ pattern: '^\\d{6}$' }) })),
      responses: {
        200: ok(
          'provider proof; the same code sent again by the same flow (a lost answer) gets the same proof while it is unspent',
          PROOF,
        ),
        400: error('invalid_code or invalid_request'),
        ...pick(403, 404, 413, 429, 503),
      },
    },
  },
  chatStart: {
    method: 'GET',
    path: '/t/:tenantId/chat/start',
    policy: 'public',
    sideEffects: true,
    budget: 'chat-start',
    operation: {
      operationId: 'redirectToChatPlatform',
      tags,
      summary: 'Send the browser to the chat platform',
      parameters: [TENANT_PARAM, param('client_id', 'query'), param('browser_flow_id', 'query')],
      responses: {
        302: { description: 'to the platform’s authorize URL with state' },
        ...pick(400, 403, 404, 429, 503),
      },
    },
  },
  /** For pages that open the platform themselves, in a popup or a redirect (contract section 11). */
  chatStartForPage: {
    method: 'POST',
    path: '/t/:tenantId/chat/start',
    policy: 'public',
    budget: 'chat-start',
    status: 200,
    operation: {
      operationId: 'getChatPlatformAuthorizeUrl',
      tags,
      summary:
        'Get the URL that sends the browser to the chat platform, for a page that opens it in a popup or a redirect (needs the flow cookie of a flow under way)',
      parameters,
      requestBody: body(obj(FLOW)),
      responses: {
        200: ok(
          'the URL to open: a one-time bounce on the auth host (GET chat/go) that binds the flow to the browser following it',
          obj({ authorize_url: str() }),
        ),
        ...pick(400, 403, 404, 413, 429, 503),
      },
    },
  },
  /**
   * The bounce a page's `authorize_url` points at (issue 22, finding 2). It writes a state for an
   * anonymous caller, so it takes the chat-start budget first (contract section 10): one page flow
   * is a `POST chat/start` and one bounce.
   */
  chatBounce: {
    method: 'GET',
    path: '/t/:tenantId/chat/go',
    policy: 'public',
    sideEffects: true,
    budget: 'chat-start',
    operation: {
      operationId: 'followChatAuthorizeUrl',
      tags,
      summary: 'Follow a page’s authorize URL: bind the flow to this browser, then go to the chat platform',
      parameters: [TENANT_PARAM, param('handle', 'query')],
      responses: {
        302: {
          description:
            'to the platform’s authorize URL with state; sets a first-party HttpOnly cookie (`__Host-svc_chat_…`, SameSite=Lax, ten minutes) that the callback requires',
        },
        400: error('invalid_request: an unknown, used or malformed handle'),
        ...pick(404, 429, 503),
      },
    },
  },
  chatCallback: {
    method: 'GET',
    path: '/t/:tenantId/chat/callback',
    policy: 'public',
    sideEffects: true,
    operation: {
      operationId: 'chatPlatformCallback',
      tags,
      summary: 'Chat platform callback',
      parameters: [
        TENANT_PARAM,
        param('code', 'query', false),
        param('state', 'query'),
        param('error', 'query', false),
        param('error_description', 'query', false),
        param('error_uri', 'query', false),
        param('iss', 'query', false),
      ],
      responses: {
        302: {
          description:
            'to the client’s redirect URI with proof_id and expires_in as query parameters (the proof is bound to the flow cookie), or with error=access_denied|temporarily_unavailable|server_error when the platform reported an error, the browser is not the one bound to the state, or any step after the state failed',
        },
        ...pick(400, 404, 503),
      },
    },
  },
  signIn: {
    method: 'POST',
    path: '/t/:tenantId/sign-in',
    policy: 'public',
    budget: 'sign-in',
    status: 200,
    operation: {
      operationId: 'signInWithProof',
      tags,
      summary: 'Sign in to the account that owns a proven credential',
      parameters,
      requestBody: body(obj({ ...FLOW, proof_id: str({ pattern: '^prf_' }) })),
      responses: {
        200: ok('token set', obj({ user_id: str(), ...GUEST_TOKEN_SET }, tokenSetRequired(['user_id']))),
        400: error('invalid_proof or invalid_request'),
        ...pick(403, 404, 429, 503),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
