import { randomBytes } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import { AppError } from '../errors/app-error';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { flowCookieName } from './browser-flows';
import { callbackError, withQuery } from './callback-redirect';
import type { TenantClients } from './tenant-clients';

/**
 * The browser binding of a redirect flow (chat platform, OpenID Connect providers; issue 22
 * finding 2): a state started by a top-level `GET …/start` is finished only by the browser holding
 * the flow cookie; a state started by a page (`POST …/start`) and followed through the auth host's
 * bounce is finished only by the browser holding the bounce's first-party cookie, since a cross-site
 * page's flow cookie lives in that page's partition and never reaches the callback. The proof the
 * callback issues stays bound to the flow cookie either way.
 */
export interface BoundState {
  readonly flowId: string;
  readonly cookieHash: string;
  readonly bindingId?: string;
  readonly bindingHash?: string;
}

export interface BindingCookie {
  readonly name: string;
  readonly value: string;
  readonly maxAgeSeconds: number;
}

/** A fresh bounce binding: what the state keeps, and the cookie the bounce sets. */
export function newBinding(
  cookieName: (bindingId: string) => string,
  ttlSeconds: number,
): { binding: { bindingId: string; bindingHash: string }; cookie: BindingCookie } {
  const bindingId = randomBytes(12).toString('base64url');
  const value = newSecret();
  return {
    binding: { bindingId, bindingHash: sha256(value) },
    cookie: { name: cookieName(bindingId), value, maxAgeSeconds: ttlSeconds },
  };
}

/**
 * The auth host's one-time bounce that a page's `authorize_url` points to (`chat/go`,
 * `providers/go`): whichever browser follows it is the one the callback accepts.
 */
export function bounceUrl(
  authOrigin: string,
  tenantId: string,
  path: 'chat/go' | 'providers/go',
  handle: string,
): string {
  const url = new URL(`${authOrigin}/t/${encodeURIComponent(tenantId)}/${path}`);
  url.searchParams.set('handle', handle);
  return url.toString();
}

/** What a callback answers: where the browser goes, and the bounce cookie its state spent. */
export interface CallbackResult {
  readonly location: string;
  /** The bounce cookie the state named: spent now, whatever the outcome. */
  readonly spentCookie?: string;
}

/**
 * A callback's end, for the chat platform and the providers alike: the state, already taken (so
 * spent whatever follows), must name a flow of this tenant or the callback answers here; otherwise
 * `redirect` sends the browser back to the state's client (redirectToClient) and the bounce's
 * cookie, if the state had one, is spent.
 */
export async function finishCallback<S extends BoundState & { readonly tenantId: string }>(
  pending: S | null,
  tenantId: string,
  cookieName: (bindingId: string) => string,
  redirect: (pending: S) => Promise<string>,
): Promise<CallbackResult> {
  if (!pending || pending.tenantId !== tenantId) throw new AppError('invalid_request', 'Unknown or used state.');
  const location = await redirect(pending);
  return pending.bindingId === undefined ? { location } : { location, spentCookie: cookieName(pending.bindingId) };
}

/** Only the browser that started the flow, or that followed the page's link, may finish it. */
export function requireBoundBrowser(
  state: BoundState,
  cookieName: (bindingId: string) => string,
  readCookie: (name: string) => string | undefined,
): void {
  const [name, hash] =
    state.bindingId !== undefined && state.bindingHash !== undefined
      ? [cookieName(state.bindingId), state.bindingHash]
      : [flowCookieName(state.flowId), state.cookieHash];
  const cookie = readCookie(name);
  if (!cookie || !safeEqual(sha256(cookie), hash))
    throw new AppError('forbidden', 'The browser that finishes the flow is not the one that started it.');
}

/**
 * Once a state has named its client, every outcome goes back to the client's registered redirect
 * URI, a failure as `error` (RFC 6749 section 4.1.2.1), so the player returns to the game instead
 * of being stranded on an error page. Proof or error travel as query parameters (contract 6). A
 * client may register several (staging and production, two sites of one game): a flow a page
 * started returns to the one on that page's origin, where its flow cookie and state are; a
 * top-level start names no page, and returns to the first.
 */
export async function redirectToClient(
  clients: TenantClients,
  logger: Logger,
  at: {
    tenantId: string;
    clientId: string;
    pageOrigin?: string | undefined;
    what: string;
    log?: Record<string, string>;
  },
  complete: () => Promise<Record<string, string>>,
): Promise<string> {
  const client = await clients.resolve(at.tenantId, at.clientId);
  const redirect = client.redirectUris.find((uri) => new URL(uri).origin === at.pageOrigin) ?? client.redirectUris[0];
  if (!redirect) throw new AppError('invalid_request', 'The client has no redirect URI.');
  const params = await complete().catch((err: unknown) => {
    const error = callbackError(err);
    logger.warn(
      { tenant: at.tenantId, ...at.log, error, cause: err instanceof AppError ? err.code : 'unexpected' },
      `${at.what} callback failed`,
    );
    return { error };
  });
  return withQuery(redirect, params);
}
