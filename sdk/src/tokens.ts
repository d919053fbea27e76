/** The token set of guest creation, sign-in, upgrade and refresh (the service's CustomerTokenSet). */
export interface TokenSet {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
  readonly scope: string;
  readonly session_id: string;
}

/** Whether an answer is a token set: what keeping a session reads of it is there. */
export function isTokenSet(answer: unknown): answer is TokenSet {
  const t = answer as Partial<Record<keyof TokenSet, unknown>> | null;
  return (
    typeof t?.access_token === 'string' &&
    typeof t.session_id === 'string' &&
    typeof t.expires_in === 'number' &&
    (t.refresh_token === undefined || typeof t.refresh_token === 'string')
  );
}

/**
 * A refusal by the service (`status` and `code` from its `{error, error_description}` body), or,
 * with status 0, a failure before any answer: `network_error` (no answer, or none in time),
 * `no_refresh_token` (nothing to refresh with), `invalid_redirect`.
 */
export class GuestApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
    /** Seconds from the answer's `Retry-After` (429, 503). */
    readonly retryAfter?: number,
  ) {
    super(`${status} ${code}: ${description}`);
    this.name = 'GuestApiError';
  }
}

/**
 * Another tab of this origin signed in to another account or started another guest meanwhile, and
 * this tab took its session over on the way: an irreversible call meant for the player this tab
 * showed is not sent for another one. The `user` event has fired; show the player, then ask again.
 */
export function playerChanged(): GuestApiError {
  return new GuestApiError(409, 'player_changed', 'Another tab changed the signed-in player; nothing was done.');
}

export function noRefreshToken(): GuestApiError {
  return new GuestApiError(0, 'no_refresh_token', 'No refresh token in secure storage.');
}
