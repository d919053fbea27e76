import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ChatPlatformAppsRepository, type ChatPlatformApp } from '../directory/chat-platform-apps.repository';
import { AppError } from '../errors/app-error';
import { newSecret } from '../platform/crypto/ids';
import { isString, objectDecoder } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';
import { BrowserFlows, type BoundFlow, type GuestRequestContext, type WithFlowCookie } from './browser-flows';
import {
  bounceUrl,
  finishCallback,
  newBinding,
  redirectToClient,
  requireBoundBrowser,
  type BindingCookie,
  type CallbackResult,
} from './browser-binding';
import {
  BINDING_FIELDS,
  SIGN_IN_HANDLE_FIELDS,
  SIGN_IN_STATE_TTL_SECONDS,
  SignInStates,
  type BoundSignInState,
  type SignInHandle,
} from './sign-in-states.store';
import { ChatPlatformClient } from './chat-platform.client';
import { ProviderProofs } from './provider-proofs';
import { TenantClients } from './tenant-clients';

/**
 * The first-party cookie the bounce sets (issue 22, finding 2). Named per bounce, so two flows
 * under way in one browser (two tabs) do not overwrite each other's binding.
 */
export const chatBindingCookieName = (bindingId: string): string => `__Host-svc_chat_${bindingId}`;

/** Where a flow started by a page is, between `POST chat/start` and the bounce. */
const decodeChatHandle = objectDecoder<SignInHandle>(SIGN_IN_HANDLE_FIELDS);

/**
 * The flow the state belongs to, after a bounce the bounce's binding (contract section 11), and the
 * PKCE verifier whose S256 challenge the platform bound to the code it issued for this state
 * (RFC 7636, RFC 9700 section 2.1.1). The verifier never leaves the server until the code
 * exchange, so a code taken from another flow (a leaked address, a log) fails at the platform.
 */
interface ChatSignInState extends BoundSignInState {
  readonly codeVerifier: string;
}

/**
 * A state written before the verifier was kept has none and decodes as absent: refused as unknown
 * (a JSON 400, as a spent state), never exchanged without PKCE.
 */
const decodeChatState = objectDecoder<ChatSignInState>({
  ...SIGN_IN_HANDLE_FIELDS,
  ...BINDING_FIELDS,
  codeVerifier: isString,
});

/**
 * The chat-platform flow (contract section 6): `start` sends the browser to the platform with a
 * one-time state bound to tenant, client and flow; `callback` consumes it, reads the user from
 * the platform's API and answers with a provider proof at the client's registered redirect URI.
 */
@Injectable()
export class ChatSignInService {
  private readonly logger = new Logger('ChatSignIn');
  private readonly states: SignInStates<SignInHandle, ChatSignInState>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly apps: ChatPlatformAppsRepository,
    private readonly platform: ChatPlatformClient,
    store: OneTimeStore,
    private readonly proofs: ProviderProofs,
  ) {
    this.states = new SignInStates(store, 'gc', decodeChatHandle, decodeChatState);
  }

  /** `GET chat/start`: a top-level navigation, which may start the flow (contract section 6). */
  async start(ctx: GuestRequestContext): Promise<WithFlowCookie<{ location: string }>> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const app = await this.app(ctx.tenantId);
    return this.flows.within(ctx, async (flow) => ({
      location: await this.authorizeUrl(app, { tenantId: ctx.tenantId, clientId: client.id }, flow),
    }));
  }

  /**
   * `POST chat/start` (contract section 11): for a page that opens the platform in a popup or a
   * redirect. The flow must already be under way and its cookie presented. The `authorize_url` is
   * the auth host's one-time bounce, not the platform: issue 22, finding 2 — whichever browser
   * follows it is the one the callback will accept, and a link an attacker obtained and followed
   * once is spent.
   */
  async startForPage(ctx: GuestRequestContext): Promise<{ authorize_url: string }> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    await this.app(ctx.tenantId);
    const flow = await this.flows.requireKnown(ctx);
    const handle = await this.states.newHandle({
      tenantId: ctx.tenantId,
      clientId: client.id,
      flowId: flow.flowId,
      cookieHash: flow.cookieHash,
      pageOrigin: ctx.pageOrigin,
    });
    return { authorize_url: bounceUrl(this.config.authOrigin, ctx.tenantId, 'chat/go', handle) };
  }

  /**
   * `GET chat/go`: the top-level navigation that follows a page's `authorize_url`. It spends the
   * handle and binds the state to this browser by a first-party HttpOnly cookie of the auth host
   * (issue 22, finding 2), then sends the browser to the platform.
   */
  async bounce(tenantId: string, handle: string): Promise<{ location: string; bindingCookie: BindingCookie }> {
    const pending = await this.states.takeHandle(handle);
    if (!pending || pending.tenantId !== tenantId) throw new AppError('invalid_request', 'Unknown or used link.');
    const app = await this.app(tenantId);
    const { binding, cookie } = newBinding(chatBindingCookieName, SIGN_IN_STATE_TTL_SECONDS);
    return { location: await this.authorizeUrl(app, pending, pending, binding), bindingCookie: cookie };
  }

  private async authorizeUrl(
    app: ChatPlatformApp,
    owner: { tenantId: string; clientId: string; pageOrigin?: string | undefined },
    flow: BoundFlow,
    binding?: { bindingId: string; bindingHash: string },
  ): Promise<string> {
    const codeVerifier = newSecret();
    const state = await this.states.newState({
      tenantId: owner.tenantId,
      clientId: owner.clientId,
      flowId: flow.flowId,
      cookieHash: flow.cookieHash,
      pageOrigin: owner.pageOrigin,
      codeVerifier,
      ...binding,
    });
    return this.platform.authorizeUrl(app, { state, codeVerifier });
  }

  /**
   * `readCookie` reads one cookie by name once the state has named the flow (and the bounce). The
   * state is consumed first, so whatever follows, it cannot be used twice. Once the state has named
   * the client, every outcome goes back to the client's registered redirect URI, a failure as
   * `error`, so the player returns to the game instead of being stranded on an error page; only a
   * state that names no flow of this tenant answers here. Proof or error travel as query
   * parameters (contract section 6); the proof is bound to the flow's HttpOnly cookie, so a script
   * of the page that reads it from the address cannot use it without that cookie.
   */
  async callback(
    tenantId: string,
    reply: { code?: string | undefined; state: string; error?: string | undefined },
    readCookie: (name: string) => string | undefined,
  ): Promise<CallbackResult> {
    return finishCallback(await this.states.takeState(reply.state), tenantId, chatBindingCookieName, (pending) =>
      redirectToClient(
        this.clients,
        this.logger,
        { tenantId, clientId: pending.clientId, pageOrigin: pending.pageOrigin, what: 'chat' },
        () => this.complete(pending, reply, readCookie),
      ),
    );
  }

  private async complete(
    pending: ChatSignInState,
    reply: { code?: string | undefined; error?: string | undefined },
    readCookie: (name: string) => string | undefined,
  ): Promise<Record<string, string>> {
    requireBoundBrowser(pending, chatBindingCookieName, readCookie);
    // The player declined (or the platform refused) on the platform's page. Only two fixed codes
    // go back: the platform's own text is never reflected to the client.
    if (reply.code === undefined || reply.error !== undefined)
      return { error: reply.error === 'access_denied' ? 'access_denied' : 'server_error' };
    const app = await this.apps.find(pending.tenantId);
    if (!app) throw new AppError('not_found', 'The tenant has no chat platform.');
    const user = await this.platform.userForCode(app, reply.code, pending.codeVerifier);
    const proof = await this.proofs.issue(pending, {
      provider: 'chat_platform',
      subject: user.id,
      verifiedEmail: user.verifiedEmail,
      metadata: { username: user.username, global_name: user.globalName },
    });
    return { proof_id: proof.proof_id, expires_in: String(proof.expires_in) };
  }

  private async app(tenantId: string): Promise<ChatPlatformApp> {
    const app = await this.apps.find(tenantId);
    if (!app) throw new AppError('not_found', 'This tenant has no chat platform configured.');
    return app;
  }
}
