import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { IdentityProvidersRepository, type IdentityProvider } from '../directory/identity-providers.repository';
import { AppError } from '../errors/app-error';
import { sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { isString, objectDecoder } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';
import {
  bounceUrl,
  finishCallback,
  newBinding,
  redirectToClient,
  requireBoundBrowser,
  type BindingCookie,
  type BoundState,
  type CallbackResult,
} from './browser-binding';
import {
  BINDING_FIELDS,
  SIGN_IN_HANDLE_FIELDS,
  SIGN_IN_STATE_TTL_SECONDS,
  SignInStates,
  type SignInHandle,
} from './sign-in-states.store';
import { BrowserFlows, type BoundFlow, type GuestRequestContext, type WithFlowCookie } from './browser-flows';
import { ProviderClients } from './provider-clients';
import { ProviderIdTokens } from './provider-id-tokens';
import { ProviderProofs } from './provider-proofs';
import { TenantClients } from './tenant-clients';

/** The first-party cookie of the bounce, named per bounce so two flows in one browser keep theirs. */
export const providerBindingCookieName = (bindingId: string): string => `__Host-svc_idp_${bindingId}`;

interface ProviderHandle extends SignInHandle {
  readonly providerId: string;
}

const HANDLE_FIELDS = { ...SIGN_IN_HANDLE_FIELDS, providerId: isString };
const decodeHandle = objectDecoder<ProviderHandle>(HANDLE_FIELDS);

/**
 * The server side of one browser sign-in at a provider (contract 14): the flow it is bound to,
 * the PKCE verifier and nonce the callback checks, and, for a flow a page started by `POST
 * providers/{id}/start`, the bounce's first-party cookie that the callback requires instead of
 * the flow cookie (as the chat flow's, issue 22 finding 2).
 */
interface ProviderState extends ProviderHandle, BoundState {
  readonly nonce: string;
  readonly codeVerifier: string;
}

const decodeState = objectDecoder<ProviderState>({
  ...HANDLE_FIELDS,
  nonce: isString,
  codeVerifier: isString,
  ...BINDING_FIELDS,
});

/**
 * An ID token of the native flow, spent: it proves a sign-in once. Keyed on what the signature
 * covers (header and payload as sent), never on the whole string: one signature has several
 * spellings that verify (base64url's unused low bits in its last character, and ECDSA's high-S
 * twin), and each would otherwise count as an unused token.
 */
const spentTokenKey = (idToken: string): string => `gpt:{${sha256(idToken.slice(0, idToken.lastIndexOf('.')))}}`;

/**
 * Sign-in with a tenant's OpenID Connect providers (contract 14): the browser flow (authorization
 * code with PKCE S256, state and nonce bound to the flow server-side) and the native flow (an ID
 * token the platform's SDK obtained). Both end in a provider proof bound to tenant, client and
 * flow, which `guest/upgrade`, `sign-in` and `me/identities` take as they take email and chat proofs.
 */
@Injectable()
export class ProviderSignInService {
  private readonly logger = new Logger('ProviderSignIn');
  private readonly states: SignInStates<ProviderHandle, ProviderState>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly providers: IdentityProvidersRepository,
    private readonly oidc: ProviderClients,
    private readonly idTokens: ProviderIdTokens,
    private readonly proofs: ProviderProofs,
    private readonly store: OneTimeStore,
  ) {
    this.states = new SignInStates(store, 'gp', decodeHandle, decodeState);
  }

  /** `GET providers/{id}/start`: a top-level navigation, which may start the flow. */
  async start(ctx: GuestRequestContext, providerId: string): Promise<WithFlowCookie<{ location: string }>> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const provider = await this.provider(ctx.tenantId, providerId);
    return this.flows.within(ctx, async (flow) => ({
      location: await this.authorizeUrl(provider, { tenantId: ctx.tenantId, clientId: client.id, providerId, ...flow }),
    }));
  }

  /**
   * `POST providers/{id}/start` (a page opening the provider in a popup or a redirect): the flow
   * must be under way with its cookie; the `authorize_url` is the auth host's one-time bounce,
   * so whichever browser follows it is the one the callback accepts.
   */
  async startForPage(ctx: GuestRequestContext, providerId: string): Promise<{ authorize_url: string }> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    await this.provider(ctx.tenantId, providerId);
    const flow = await this.flows.requireKnown(ctx);
    const handle = await this.states.newHandle({
      tenantId: ctx.tenantId,
      clientId: client.id,
      providerId,
      ...flow,
      pageOrigin: ctx.pageOrigin,
    });
    return { authorize_url: bounceUrl(this.config.authOrigin, ctx.tenantId, 'providers/go', handle) };
  }

  /** `GET providers/go`: spends the handle, binds the state to this browser, goes to the provider. */
  async bounce(tenantId: string, handle: string): Promise<{ location: string; bindingCookie: BindingCookie }> {
    const pending = await this.states.takeHandle(handle);
    if (!pending || pending.tenantId !== tenantId) throw new AppError('invalid_request', 'Unknown or used link.');
    const provider = await this.provider(tenantId, pending.providerId);
    const { binding, cookie } = newBinding(providerBindingCookieName, SIGN_IN_STATE_TTL_SECONDS);
    return { location: await this.authorizeUrl(provider, pending, binding), bindingCookie: cookie };
  }

  private async authorizeUrl(
    provider: IdentityProvider,
    owner: ProviderHandle,
    binding?: { bindingId: string; bindingHash: string },
  ): Promise<string> {
    const nonce = newSecret();
    const codeVerifier = newSecret();
    const state = await this.states.newState({
      tenantId: owner.tenantId,
      clientId: owner.clientId,
      providerId: owner.providerId,
      flowId: owner.flowId,
      cookieHash: owner.cookieHash,
      pageOrigin: owner.pageOrigin,
      nonce,
      codeVerifier,
      ...binding,
    });
    return this.oidc.authorizeUrl(provider, { state, nonce, codeVerifier }, binding !== undefined);
  }

  /**
   * `GET providers/callback`: consumes the state first, so whatever follows it is used once. Once
   * the state has named the client, every outcome goes back to the client's registered redirect
   * URI (a failure as `error`); only a state that names no flow of this tenant answers here.
   */
  async callback(
    tenantId: string,
    reply: { code?: string | undefined; state: string; error?: string | undefined; iss?: string | undefined },
    readCookie: (name: string) => string | undefined,
  ): Promise<CallbackResult> {
    return finishCallback(await this.states.takeState(reply.state), tenantId, providerBindingCookieName, (pending) =>
      redirectToClient(
        this.clients,
        this.logger,
        {
          tenantId,
          clientId: pending.clientId,
          pageOrigin: pending.pageOrigin,
          what: 'provider',
          log: { provider: pending.providerId },
        },
        () => this.complete(pending, reply, readCookie),
      ),
    );
  }

  private async complete(
    pending: ProviderState,
    reply: { code?: string | undefined; state: string; error?: string | undefined; iss?: string | undefined },
    readCookie: (name: string) => string | undefined,
  ): Promise<Record<string, string>> {
    requireBoundBrowser(pending, providerBindingCookieName, readCookie);
    // The provider's own error text is never reflected: two fixed codes go back.
    if (reply.code === undefined || reply.error !== undefined)
      return { error: reply.error === 'access_denied' ? 'access_denied' : 'server_error' };
    // A provider removed while the flow was under way ends it.
    const provider = await this.provider(pending.tenantId, pending.providerId);
    const proven = await this.oidc.callback(
      provider,
      { code: reply.code, state: reply.state, ...(reply.iss === undefined ? {} : { iss: reply.iss }) },
      { state: reply.state, nonce: pending.nonce, codeVerifier: pending.codeVerifier },
    );
    const proof = await this.proofs.issue(pending, {
      provider: provider.id,
      subject: proven.subject,
      verifiedEmail: proven.verifiedEmail,
      metadata: { issuer: provider.issuer },
    });
    return { proof_id: proof.proof_id, expires_in: String(proof.expires_in) };
  }

  /**
   * `POST providers/{id}/token` (contract 14, native flow): the ID token is checked before
   * anything is written, so a refused token leaves no flow, user or proof; a checked one proves a
   * sign-in once (a replay of it is refused like any other bad token), and a request that issues no
   * proof leaves it unspent.
   */
  async nativeToken(
    ctx: GuestRequestContext,
    providerId: string,
    idToken: string,
    nonce: string | undefined,
  ): Promise<WithFlowCookie<{ proof_id: string; expires_in: number }>> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const provider = await this.provider(ctx.tenantId, providerId);
    const proven = await this.idTokens.verify(provider, idToken, nonce);
    return this.flows.within(ctx, async (flow: BoundFlow) => {
      const ttl = Math.max(1, proven.expiresAt - Math.floor(Date.now() / 1000) + 60);
      const spent = spentTokenKey(idToken);
      if (!(await this.store.putIfAbsent(spent, 1, ttl)))
        throw new AppError('invalid_grant', 'This ID token was used already.');
      return this.proofs
        .issue(
          { tenantId: ctx.tenantId, clientId: client.id, ...flow },
          {
            provider: provider.id,
            subject: proven.subject,
            verifiedEmail: proven.verifiedEmail,
            metadata: { issuer: provider.issuer },
          },
        )
        .catch(async (err: unknown) => {
          // No proof came of it (PostgreSQL or Redis refused the work, contract 10): the token
          // is spent only with the proof it produced, so the player's retry with it succeeds.
          await this.store.destroy(spent).catch(() => undefined);
          throw err;
        });
    });
  }

  private async provider(tenantId: string, id: string): Promise<IdentityProvider> {
    const provider = await this.providers.find(tenantId, id);
    if (!provider) throw new AppError('not_found', 'This tenant has no such identity provider.');
    return provider;
  }
}
