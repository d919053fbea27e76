/**
 * The closed set of error codes the service answers with (spec section 7, contract section 2).
 * Each code has one status; the filter is the only place that turns them into HTTP.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_code: 400,
  invalid_proof: 400,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  unauthorized_client: 400,
  invalid_client: 401,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  tenant_not_found: 404,
  method_not_allowed: 405,
  identity_in_use: 409,
  last_identity: 409,
  intent_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  server_error: 500,
  temporarily_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const DEFAULT_DESCRIPTION: Record<ErrorCode, string> = {
  invalid_request: 'The request is malformed.',
  invalid_code: 'The code is wrong, expired or used up. Request a new code.',
  invalid_proof: 'The proof or linking intent is not valid for this request.',
  invalid_grant: 'The grant is invalid, expired or already used.',
  unsupported_grant_type: 'This grant type is not supported.',
  invalid_scope: 'The requested scope is invalid.',
  unauthorized_client: 'The client may not use this grant.',
  invalid_client: 'Client authentication failed.',
  unauthorized: 'A valid access token is required.',
  forbidden: 'This request is not allowed.',
  not_found: 'No such resource.',
  tenant_not_found: 'No such active tenant.',
  method_not_allowed: 'Method not allowed.',
  identity_in_use: 'The credential belongs to another account. Sign in to that account instead.',
  last_identity: 'This is the account’s last credential that can sign in; link another before removing it.',
  intent_conflict: 'Another live linking intent exists for this browser flow.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'The content type is not supported.',
  rate_limited: 'Too many requests. Retry later.',
  server_error: 'Internal error.',
  temporarily_unavailable: 'The service is temporarily unavailable. Retry later.',
};

/** The credential a 401 asks for; the edge names it in `WWW-Authenticate`. */
export type AuthChallenge = 'bearer' | 'basic';

/**
 * What an error says beyond its code, as data: how the caller should retry or authenticate.
 * Only the edge (src/http/error.filter.ts) turns it into headers.
 */
export interface AppErrorDetails {
  /** 429: seconds until the exhausted budget admits another request. */
  readonly retryAfterSeconds?: number;
  /** 401: the bearer token is invalid (RFC 6750 §3.1), or HTTP Basic client authentication failed. */
  readonly challenge?: AuthChallenge;
  /** Only where the contract gives one code two statuses (invalid_client: 401 or 400). */
  readonly status?: number;
  /** 405: the methods the route does take (RFC 9110 §15.5.6). */
  readonly allow?: readonly string[];
}

export class AppError extends Error {
  readonly status: number;
  readonly description: string;
  readonly retryAfterSeconds: number | undefined;
  readonly challenge: AuthChallenge | undefined;
  readonly allow: readonly string[] | undefined;

  constructor(
    readonly code: ErrorCode,
    description?: string,
    details: AppErrorDetails = {},
  ) {
    super(code);
    this.name = 'AppError';
    this.status = details.status ?? ERROR_STATUS[code];
    this.description = description ?? DEFAULT_DESCRIPTION[code];
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.challenge = details.challenge;
    this.allow = details.allow;
  }
}

/** Marks a dependency (Redis, PostgreSQL, SMTP, chat platform) failure: answered as 503. */
export class DependencyUnavailableError extends AppError {
  constructor(
    readonly dependency: string,
    readonly causeError?: unknown,
  ) {
    super('temporarily_unavailable');
    this.name = 'DependencyUnavailableError';
  }
}

export function errorBody(code: ErrorCode, description: string): { error: ErrorCode; error_description: string } {
  return { error: code, error_description: description };
}
