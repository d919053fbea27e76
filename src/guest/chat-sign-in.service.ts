import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ChatPlatformAppsRepository, type ChatPlatformApp } from '../directory/chat-platform-apps.repository';
import { IdentitiesRepository } from '../directory/identities.repository';
import { AppError } from '../errors/app-error';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
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

const stateKey = (state: string): string => `gcs:{${sha256(state)}}`;

/**
 * The chat-platform flow (contract section 6): `start` sends the browser to the platform with a
 * one-time state bound to tenant, client and flow; `callback` consumes it, reads the user from
 * the platform's API and answers with a provider proof at the client's registered redirect URI.
 */
@Injectable()
export class ChatSignInService {
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
   * first, so whatever follows, it cannot be used twice.
   */
  async callback(
    tenantId: string,
    reply: { code?: string | undefined; state: string; error?: string | undefined },
    readCookie: (flowId: string) => string | undefined,
  ): Promise<{ location: string }> {
    const pending = await this.store.consume<ChatState>(stateKey(reply.state));
    if (!pending || pending.tenantId !== tenantId) throw new AppError('invalid_request', 'Unknown or used state.');
    const cookie = pending.boundByState ? undefined : readCookie(pending.flowId);
    if (!pending.boundByState && (!cookie || !safeEqual(sha256(cookie), pending.cookieHash)))
      throw new AppError('forbidden', 'The browser flow cookie is missing or does not match.');
    const client = await this.clients.resolve(tenantId, pending.clientId);
    const redirect = client.redirectUris[0];
    const app = await this.apps.find(tenantId);
    if (!redirect || !app)
      throw new AppError('invalid_request', 'The client has no redirect URI or the tenant no chat platform.');
    if (reply.code === undefined || reply.error !== undefined) {
      // The player declined (or the platform refused) on the platform's page. The state proved
      // this browser started the flow, so the game hears about it at its registered redirect URI
      // instead of the player being stranded on an error page. Only two fixed codes go back: the
      // platform's own text is never reflected to the client.
      return {
        location: withQuery(redirect, { error: reply.error === 'access_denied' ? 'access_denied' : 'server_error' }),
      };
    }
    const user = await this.platform.userForCode(app, reply.code);
    const { user: owner, identity } = await this.identities.resolveOrCreate(
      {
        tenantId,
        provider: 'chat_platform',
        providerSubject: user.id,
        email: user.verifiedEmail,
        emailVerified: user.verifiedEmail !== null,
        metadata: { username: user.username, global_name: user.globalName },
      },
      'provisional',
    );
    if (owner.status !== 'active' || identity.status !== 'active')
      throw new AppError('invalid_request', 'This account is not active.');
    const ttl = this.config.ttl.providerProof;
    const proofId = await this.records.putProof(
      pending.flowId,
      {
        kind: 'provider',
        tenantId,
        clientId: client.id,
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
    return { location: withQuery(redirect, { proof_id: proofId, expires_in: String(ttl) }) };
  }
}

function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
