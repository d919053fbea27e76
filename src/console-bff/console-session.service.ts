import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError, DependencyUnavailableError } from '../errors/app-error';
import type { PrincipalOf } from '../http/principal';
import { newSecret } from '../platform/crypto/ids';
import { decodeJson } from '../platform/redis/decode';
import { ConsoleApiClient, type ApiMethod, type TokenGrant, type UpstreamResponse } from './console-api.client';
import { ConsoleSessionEndedError } from './console-session-ended';
import { ConsoleSessionsStore, type ConsoleSessionState, type StoredConsoleSession } from './console-sessions.store';

type ConsoleSession = PrincipalOf<'console-session'>;

/** Refresh this long before expiry at most (issue 3: "refresh before expiry"). */
const REFRESH_MARGIN_MS = 30_000;
/** How often a request waiting for another request's refresh looks at the record again. */
const POLL_MS = 25;

export interface ManagementUser {
  readonly id: string;
  readonly email: string;
  readonly email_verified: boolean;
}

/**
 * The console session lifecycle after sign-in: idle and absolute lifetimes, access tokens kept
 * fresh with a single-flight refresh, calls to the API with the server's bearer, and sign-out.
 */
@Injectable()
export class ConsoleSessionService {
  private readonly logger = new Logger('ConsoleSessionService');
  /** Outlives the refresh call it guards (one HTTP call bounded by the dependency timeout). */
  private readonly lockTtlMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: ConsoleSessionsStore,
    private readonly api: ConsoleApiClient,
  ) {
    this.lockTtlMs = 2 * config.dependencyTimeoutMs + 1000;
  }

  /** The record for a fresh token grant; times are epoch ms. */
  recordFor(grant: TokenGrant, now: number, createdAt = now): ConsoleSessionState {
    const lifetimeMs = grant.expiresIn * 1000;
    return {
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      sessionId: grant.sessionId,
      accessExpiresAt: now + lifetimeMs,
      // A quarter of the lifetime at most, so even shortened test lifetimes refresh in time.
      refreshAt: now + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 4),
      createdAt,
      absoluteExpiresAt: createdAt + this.config.ttl.consoleSessionAbsolute * 1000,
    };
  }

  /** Redis TTL of a record: the idle lifetime, never past the absolute end (spec 2.2). */
  ttlSeconds(record: ConsoleSessionState, now = Date.now()): number {
    return Math.max(
      1,
      Math.min(this.config.ttl.consoleSessionIdle, Math.ceil((record.absoluteExpiresAt - now) / 1000)),
    );
  }

  /** GET /management-auth/current, answered with exactly the spec's user fields. */
  async currentUser(session: ConsoleSession, requestId: string | undefined): Promise<{ user: ManagementUser }> {
    const res = await this.callApi(session, 'GET', '/management-auth/current', requestId);
    if (res.status !== 200)
      throw new DependencyUnavailableError('console-api', new Error(`current answered ${res.status}`));
    // Anything but that JSON (a gateway's HTML page, a cut-off answer) reads as absent: 503, not 500.
    const user = decodeJson(res.body.toString('utf8'), (v) => v as { user?: Partial<ManagementUser> } | null)?.user;
    if (typeof user?.id !== 'string' || typeof user.email !== 'string')
      throw new DependencyUnavailableError('console-api', new Error('malformed current answer'));
    return { user: { id: user.id, email: user.email, email_verified: user.email_verified === true } };
  }

  /**
   * A call to the API with the session's bearer (spec 4.1). Upstream 401 drops the session
   * (spec 3, 7.1). Upstream 408, 429, 5xx or no answer keep it and give 503 (spec 3, contract
   * section 10); 403 and 404 are the API's answer about the resource and go to the browser.
   */
  async callApi(
    session: ConsoleSession,
    method: ApiMethod,
    path: string,
    requestId: string | undefined,
    body?: unknown,
  ): Promise<UpstreamResponse> {
    // Use extends the idle lifetime (spec 2.2: idle 8 h); a record gone meanwhile ends the session.
    if (!(await this.store.touch(session.sessionHandle, this.ttlSeconds(session.session))))
      throw new ConsoleSessionEndedError();
    const accessToken = await this.accessToken(session, requestId);
    const res = await this.api.request(method, path, accessToken, requestId, body);
    // Lines about the call name its path without the query, as request lines do: a player search
    // carries the address it looks for (`users?q=`), and logs hold no address.
    const logged = path.split('?')[0];
    if (res.status === 401) {
      await this.store.destroy(session.sessionHandle);
      this.logger.warn({ path: logged }, 'API refused the console bearer; console session dropped');
      throw new ConsoleSessionEndedError();
    }
    if (res.status >= 500 || res.status === 408 || res.status === 429)
      throw new DependencyUnavailableError('console-api', new Error(`${logged} answered ${res.status}`));
    return res;
  }

  /**
   * Sign-out (spec 2.2, 3): `revoke-session` with the stored session id and the console client's
   * credentials, then the record is cleared. No bearer is needed, so an expired access token
   * costs no refresh. Unless the API confirms (200, `revoked` true, or false for a session it
   * already ended), the session is kept and the answer is 503: a sign-out is never reported as
   * done while the control-plane session may still live; the user can retry.
   */
  async signOut(session: ConsoleSession, requestId: string | undefined): Promise<void> {
    const status = await this.api.revokeSession(session.session.sessionId, requestId);
    if (status !== 200)
      throw new DependencyUnavailableError('console-api', new Error(`revoke-session answered ${status}`));
    await this.store.destroy(session.sessionHandle);
  }

  /** A usable access token: the stored one, or a refreshed one when it is about to expire. */
  private async accessToken(session: ConsoleSession, requestId: string | undefined): Promise<string> {
    if (Date.now() < session.session.refreshAt) return session.session.accessToken;
    return this.refreshOnce(session.sessionHandle, session.session.accessToken, requestId);
  }

  /**
   * Single flight (issue 3): of many concurrent requests of one session, on any instance
   * sharing this Redis, one takes the lock and refreshes; the others wait until the record
   * carries a new access token and use it. A rotated refresh token is therefore never
   * presented twice, so the API's replay rule (spec 2.2) never revokes a healthy session.
   */
  private async refreshOnce(handle: string, staleAccessToken: string, requestId: string | undefined): Promise<string> {
    const owner = newSecret();
    const deadline = Date.now() + this.lockTtlMs + 500;
    for (;;) {
      if (await this.store.lock(handle, owner, this.lockTtlMs)) {
        try {
          return await this.refreshHoldingLock(handle, staleAccessToken, requestId);
        } finally {
          await this.store.unlock(handle, owner).catch(() => undefined);
        }
      }
      await sleep(POLL_MS);
      const current = await this.store.read(handle);
      if (!current) throw new ConsoleSessionEndedError();
      if (current.record.accessToken !== staleAccessToken) return current.record.accessToken;
      if (Date.now() > deadline) throw new AppError('temporarily_unavailable');
    }
  }

  private async refreshHoldingLock(
    handle: string,
    staleAccessToken: string,
    requestId: string | undefined,
  ): Promise<string> {
    // Read again under the lock: another request may have refreshed since this one read.
    const current = await this.store.read(handle);
    if (!current) throw new ConsoleSessionEndedError();
    if (current.record.accessToken !== staleAccessToken) return current.record.accessToken;
    const outcome = await this.api.refresh(current.record.refreshToken, requestId);
    switch (outcome.kind) {
      case 'rejected':
        // Spec 3 and 7.1: a 400 or 401 on refresh drops the console session.
        await this.store.destroy(handle);
        this.logger.warn({ reason: outcome.reason }, 'refresh refused; console session dropped');
        throw new ConsoleSessionEndedError();
      case 'unavailable':
        throw new DependencyUnavailableError('console-api', new Error(outcome.reason));
      case 'granted':
        return this.storeRefreshed(current, outcome.grant);
    }
  }

  private async storeRefreshed(current: StoredConsoleSession, grant: TokenGrant): Promise<string> {
    const now = Date.now();
    const next = this.recordFor(grant, now, current.record.createdAt);
    // Only over the record the refresh started from: a sign-out meanwhile stays signed out.
    if (!(await this.store.replace(current, next, this.ttlSeconds(next, now)))) throw new ConsoleSessionEndedError();
    return next.accessToken;
  }
}
