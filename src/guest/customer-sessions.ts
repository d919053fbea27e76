import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { SessionRecordsRepository, type RecoverableSession } from '../directory/session-records.repository';
import { DependencyUnavailableError } from '../errors/app-error';
import { MetricsService } from '../platform/metrics/metrics.service';
import type { SessionSecret } from '../platform/session-store/refresh-tokens';
import { SessionStore } from '../platform/session-store/session-store';
import { CustomerTokens } from './customer-tokens';
import type { ClientRecord } from '../directory/records';

/**
 * Contract section 10: without `offline_access` nothing can ever refresh a session, so it lives
 * no longer than its access token, in Redis and in its row. Otherwise a session starts with its
 * idle lifetime (contract 13), capped by the absolute one, and each refresh slides it.
 */
export function customerSessionTtl(client: ClientRecord, config: Pick<AppConfig, 'ttl' | 'customerSessions'>): number {
  if (!client.scopes.includes('offline_access')) return config.ttl.guestAccessToken;
  const { idleTtl, absoluteTtl } = config.customerSessions;
  return absoluteTtl === null ? idleTtl : Math.min(idleTtl, absoluteTtl);
}

export interface CustomerTokenSet {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
  readonly scope: string;
  readonly session_id: string;
}

/** The scopes a session gets: exactly what the client allows, never more (spec 4.3). */
export function grantedScope(client: ClientRecord): string {
  return client.scopes.join(' ');
}

/**
 * A token-set answer and the client it was issued to: the edge sets a browser client's refresh
 * cookie from it (refresh-cookie.ts) without reading the client row again.
 */
export interface Issued<T> {
  readonly answer: T;
  readonly client: ClientRecord;
}

/**
 * How a customer session began. Only guest creation starts a guest's session; sign-in and upgrade
 * start a full account's. The origin is also the `grant` label of the tokens-issued metric.
 */
export type SessionOrigin = 'guest' | 'sign_in' | 'upgrade';
const STARTS_GUEST_SESSION: Readonly<Record<SessionOrigin, boolean>> = { guest: true, sign_in: false, upgrade: false };

/**
 * A customer session about to begin: its id, and its secret, made before its row so the row keeps
 * the secret's digest (session recovery rebuilds the live session from the row after Redis lost it).
 */
export interface NewSession {
  readonly id: string;
  readonly secret: SessionSecret;
}

/** The grants a token set is issued by: a session's start, or a refresh of it. */
type IssuingGrant = SessionOrigin | 'refresh_token';

interface SessionClaims {
  readonly userId: string;
  readonly sessionId: string;
  readonly scope: string;
  readonly guest: boolean;
}

interface SignedTokens {
  readonly access: { readonly token: string; readonly expiresIn: number };
  readonly idToken: string | undefined;
}

/** Creates customer sessions and their token sets: guest creation, sign-in, upgrade, refresh. */
@Injectable()
export class CustomerSessions {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly sessions: SessionStore,
    private readonly records: SessionRecordsRepository,
    private readonly tokens: CustomerTokens,
    private readonly metrics: MetricsService,
  ) {}

  ttlFor(client: ClientRecord): number {
    return customerSessionTtl(client, this.config);
  }

  newSession(): NewSession {
    return { id: this.sessions.newSessionId(), secret: this.sessions.newSecret() };
  }

  /** What the row of a new session keeps so that its live session can be rebuilt. */
  recoverable(client: ClientRecord, session: NewSession, origin: SessionOrigin): RecoverableSession {
    return { secretDigest: session.secret.digest, scope: grantedScope(client), guest: STARTS_GUEST_SESSION[origin] };
  }

  /**
   * The durable row of a new session, written inside the caller's transaction. Nothing is live yet:
   * `activate` makes it so after the commit, so no row lock is held while Redis answers or a token
   * is signed. A row whose activation then fails is of no use to anyone and expires with its TTL.
   */
  async record(
    client: ClientRecord,
    userId: string,
    origin: SessionOrigin,
    m: EntityManager = this.db.manager,
  ): Promise<NewSession> {
    const session = this.newSession();
    await this.records.record(
      {
        id: session.id,
        tenantId: client.tenantId,
        userId,
        clientId: client.id,
        recoverable: this.recoverable(client, session, origin),
      },
      this.ttlFor(client),
      m,
    );
    return session;
  }

  /**
   * The live session in Redis and its tokens, for a session whose row is committed. The tokens
   * are signed while the session is written, and a failed write discards tokens nobody has seen.
   */
  async activate(
    client: ClientRecord,
    userId: string,
    recorded: NewSession,
    origin: SessionOrigin,
  ): Promise<CustomerTokenSet> {
    const scope = grantedScope(client);
    const sessionId = recorded.id;
    const session = { userId, sessionId, scope, guest: STARTS_GUEST_SESSION[origin] };
    const [created, signed] = await Promise.all([
      this.sessions.create(
        { sessionId, tenantId: client.tenantId, userId, clientId: client.id, scope, email: '', guest: session.guest },
        this.ttlFor(client),
        recorded.secret,
      ),
      this.sign(client, session),
    ]);
    if (!created.created) throw new DependencyUnavailableError('redis');
    return this.assemble(session, signed, created.refreshToken, origin);
  }

  async tokenSet(client: ClientRecord, session: SessionClaims, refreshToken: string): Promise<CustomerTokenSet> {
    return this.assemble(session, await this.sign(client, session), refreshToken, 'refresh_token');
  }

  /** The access token, and the ID token when the scope holds `openid`, signed concurrently. */
  private async sign(client: ClientRecord, session: SessionClaims): Promise<SignedTokens> {
    const { userId, sessionId, scope, guest } = session;
    const [access, idToken] = await Promise.all([
      this.tokens.issueAccess({ tenantId: client.tenantId, userId, sessionId, clientId: client.id, scope, guest }),
      scope.split(' ').includes('openid')
        ? this.tokens.issueId({ tenantId: client.tenantId, userId, clientId: client.id, sessionId, guest })
        : undefined,
    ]);
    return { access, idToken };
  }

  private assemble(
    session: SessionClaims,
    { access, idToken }: SignedTokens,
    refreshToken: string,
    grant: IssuingGrant,
  ): CustomerTokenSet {
    const { sessionId, scope } = session;
    this.metrics.tokensIssued.inc({ realm: 'customer', grant });
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      // Spec 4.3: a refresh token only with offline_access, an ID token only with openid.
      ...(scope.split(' ').includes('offline_access') ? { refresh_token: refreshToken } : {}),
      ...(idToken ? { id_token: idToken } : {}),
      scope,
      session_id: sessionId,
    };
  }
}
