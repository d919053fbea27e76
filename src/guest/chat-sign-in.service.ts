import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ChatPlatformAppsRepository, type ChatPlatformApp } from '../directory/chat-platform-apps.repository';
import { IdentitiesRepository } from '../directory/identities.repository';
import { AppError } from '../errors/app-error';
import { dependencyOf } from '../errors/dependency-failure';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { isString, objectDecoder, optional } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';
import { BrowserFlows, type BoundFlow, type GuestRequestContext, type WithFlowCookie } from './browser-flows';
import { ChatPlatformClient } from './chat-platform.client';
import { FlowRecordsStore } from './flow-records.store';
import { TenantClients } from './tenant-clients';

const STATE_TTL_SECONDS = 600;

interface ChatState {
  readonly tenantId: string;
  readonly clientId: string;
  readonly flowId: string;
  readonly cookieHash: string;
  /**
   * Set when a page started the flow by `POST chat/start` with its flow cookie (contract section
   * 11): the state alone binds the flow, because a cross-site page's cookie lives in that page's
   * partition and never reaches the callback's top-level navigation. The proof the callback
   * issues stays bound to the flow cookie, so only that page can use it.
   */
  readonly boundByState?: true;
}

const decodeChatState = objectDecoder<ChatState>({
  tenantId: isString,
  clientId: isString,
  flowId: isString,
  cookieHash: isString,
  boundByState: optional((v): v is true => v === true),
});

const stateKey = (state: string): string => `gcs:{${sha256(state)}}`;

/**
 * The chat-platform flow (contract section 6): `start` sends the browser to the platform with a
 * one-time state bound to tenant, client and flow; `callback` consumes it, reads the user from
 * the platform's API and answers with a provider proof at the client's registered redirect URI.
 */
@Injectable()
export class ChatSignInService {
  private readonly logger = new Logger('ChatSignIn');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly apps: ChatPlatformAppsRepository,
    private readonly platform: ChatPlatformClient,
    private readonly store: OneTimeStore,
    private readonly records: FlowRecordsStore,
    private readonly identities: IdentitiesRepository,
  ) {}

  /** `GET chat/start`: a top-level navigation, which may start the flow (contract section 6). */
  async start(ctx: GuestRequestContext): Promise<WithFlowCookie<{ location: string }>> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const app = await this.apps.find(ctx.tenantId);
    if (!app) throw new AppError('not_found', 'This tenant has no chat platform configured.');
    return this.flows.within(ctx, async (flow) => ({
      location: await this.authorizeUrl(app, { tenantId: ctx.tenantId, clientId: client.id }, flow, false),
    }));
  }

  /**
   * `POST chat/start` (contract section 11): for a page that opens the platform in a popup or a
   * redirect. The flow must already be under way and its cookie presented.
   */
  async startForPage(ctx: GuestRequestContext): Promise<{ authorize_url: string }> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const app = await this.apps.find(ctx.tenantId);
    if (!app) throw new AppError('not_found', 'This tenant has no chat platform configured.');
    const flow = await this.flows.requireKnown(ctx);
    return {
      authorize_url: await this.authorizeUrl(app, { tenantId: ctx.tenantId, clientId: client.id }, flow, true),
    };
  }

  private async authorizeUrl(
    app: ChatPlatformApp,
    owner: { tenantId: string; clientId: string },
    flow: BoundFlow,
    boundByState: boolean,
  ): Promise<string> {
    const state = newSecret();
    await this.store.put(
      stateKey(state),
      {
        ...owner,
        flowId: flow.flowId,
        cookieHash: flow.cookieHash,
        ...(boundByState ? { boundByState: true as const } : {}),
      } satisfies ChatState,
      STATE_TTL_SECONDS,
    );
    return this.platform.authorizeUrl(app, state);
  }

  /**
   * `readCookie` gives the flow cookie once the state has named the flow. The state is consumed
   * first, so whatever follows, it cannot be used twice. Once the state has named the client, every
   * outcome goes back to the client's registered redirect URI, a failure as `error`, so the player
   * returns to the game instead of being stranded on an error page; only a state that names no
   * flow of this tenant answers here.
   */
  async callback(
    tenantId: string,
    reply: { code?: string | undefined; state: string; error?: string | undefined },
    readCookie: (flowId: string) => string | undefined,
  ): Promise<{ location: string }> {
    const pending = await this.store.consume(stateKey(reply.state), decodeChatState);
    if (!pending || pending.tenantId !== tenantId) throw new AppError('invalid_request', 'Unknown or used state.');
    const client = await this.clients.resolve(tenantId, pending.clientId);
    const redirect = client.redirectUris[0];
    if (!redirect) throw new AppError('invalid_request', 'The client has no redirect URI.');
    const params = await this.complete(pending, client.id, reply, readCookie).catch((err: unknown) => {
      const error = callbackError(err);
      this.logger.warn(
        { tenant: tenantId, error, cause: err instanceof AppError ? err.code : 'unexpected' },
        'chat callback failed',
      );
      return { error };
    });
    return { location: withQuery(redirect, params) };
  }

  private async complete(
    pending: ChatState,
    clientId: string,
    reply: { code?: string | undefined; error?: string | undefined },
    readCookie: (flowId: string) => string | undefined,
  ): Promise<Record<string, string>> {
    const cookie = pending.boundByState ? undefined : readCookie(pending.flowId);
    if (!pending.boundByState && (!cookie || !safeEqual(sha256(cookie), pending.cookieHash)))
      throw new AppError('forbidden', 'The browser flow cookie is missing or does not match.');
    // The player declined (or the platform refused) on the platform's page. Only two fixed codes
    // go back: the platform's own text is never reflected to the client.
    if (reply.code === undefined || reply.error !== undefined)
      return { error: reply.error === 'access_denied' ? 'access_denied' : 'server_error' };
    const app = await this.apps.find(pending.tenantId);
    if (!app) throw new AppError('not_found', 'The tenant has no chat platform.');
    const user = await this.platform.userForCode(app, reply.code);
    const { user: owner, identity } = await this.identities.resolveOrCreate(
      {
        tenantId: pending.tenantId,
        provider: 'chat_platform',
        providerSubject: user.id,
        email: user.verifiedEmail,
        emailVerified: user.verifiedEmail !== null,
        metadata: { username: user.username, global_name: user.globalName },
      },
      'provisional',
    );
    if (owner.status !== 'active' || identity.status !== 'active')
      throw new AppError('forbidden', 'This account is not active.');
    const ttl = this.config.ttl.providerProof;
    const proofId = await this.records.putProof(
      pending.flowId,
      {
        kind: 'provider',
        tenantId: pending.tenantId,
        clientId,
        cookieHash: pending.cookieHash,
        userId: owner.id,
        identityId: identity.id,
        provider: 'chat_platform',
        providerSubject: user.id,
        email: user.verifiedEmail,
        emailVerified: user.verifiedEmail !== null,
      },
      ttl,
    );
    return { proof_id: proofId, expires_in: String(ttl) };
  }
}

/**
 * The `error` a failed callback sends to the game (RFC 6749 section 4.1.2.1 codes): a refusal of
 * this browser or account is `access_denied`, a dependency that failed `temporarily_unavailable`
 * (the game may offer a retry), anything else `server_error`.
 */
function callbackError(err: unknown): 'access_denied' | 'temporarily_unavailable' | 'server_error' {
  if (err instanceof AppError)
    return err.code === 'forbidden'
      ? 'access_denied'
      : err.code === 'temporarily_unavailable'
        ? 'temporarily_unavailable'
        : 'server_error';
  return dependencyOf(err) ? 'temporarily_unavailable' : 'server_error';
}

function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
