// Same-origin calls to the console BFF. The browser authenticates them with the HttpOnly session
// cookie; the page never holds a token. State-changing calls carry the page's exact Origin,
// which Chromium sends because index.html sets `referrer: same-origin`.

/** An answer other than 2xx, with the contract's `{error, error_description}` when the server sent one. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `http_${status}`);
    this.status = status;
    this.code = body && typeof body.error === 'string' ? body.error : null;
    this.description = body && typeof body.error_description === 'string' ? body.error_description : null;
  }
}

/** Fired when a call finds no console session: the page returns to its sign-in view. */
export const SESSION_ENDED = 'console:session-ended';

/**
 * Fired when the signed-in person's roles may have changed (a 403, or a change of their own
 * membership): the page reads its tenants again, so it offers only what the role now allows.
 */
export const ROLES_CHANGED = 'console:roles-changed';

/** The signed-in person's tenants with their roles (`GET /management/tenants`). */
export const TENANTS = '/api/management/tenants';

/**
 * `api('/api/...', {method, body})` resolves with the parsed JSON body (null for 204) or rejects
 * with an ApiError (status 0 when the network failed).
 */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, null);
  }
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && path !== '/api/auth/current') window.dispatchEvent(new Event(SESSION_ENDED));
  // Not for the tenant list itself: the page reads it on this event, so its own 403 (a gateway's:
  // the API never refuses it) would have the page ask again as fast as the network answers.
  if (res.status === 403 && path !== TENANTS) window.dispatchEvent(new Event(ROLES_CHANGED));
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** `/api/management/tenants/{id}` followed by `rest` (already encoded). */
export function tenantPath(tenantId, rest = '') {
  return `/api/management/tenants/${encodeURIComponent(tenantId)}${rest}`;
}

/** `/users/{id}`-style path segment. */
export function segment(value) {
  return `/${encodeURIComponent(value)}`;
}

const STATUS_WORDS = {
  0: 'The console could not reach the service. Check your connection and try again.',
  401: 'Your session has ended. Please sign in again.',
  403: 'Your role in this tenant does not allow this.',
  404: 'Not found.',
  429: 'Too many requests. Please wait a moment and try again.',
  503: 'The service is temporarily unavailable. Please try again in a moment.',
};

/** What a person reads for a failed call: the server's own description first (it says what to fix). */
export function describeError(err) {
  if (err instanceof ApiError) {
    if (err.description) return err.description;
    return STATUS_WORDS[err.status] || `The request failed (HTTP ${err.status}).`;
  }
  return 'Something went wrong. Please try again.';
}
