import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ControlFlowsStore } from './control-flows.store';
import { controlPlaneIssuer } from './management-tokens';
import { ConsoleClientRows } from './console-client-rows';
import { CONTROL_PLANE_TENANT_ID, MANAGEMENT_SCOPES } from '../directory/control-plane';

export type AuthorizeQuery = Readonly<Record<string, unknown>>;

export type AuthorizeOutcome =
  /** Client or redirect URI cannot be trusted: an error page, never a redirect. */
  | { readonly kind: 'reject'; readonly message: string }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'form'; readonly flowId: string; readonly cookie: string };

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const STATE = /^[\x21-\x7e]{1,512}$/;

/** The authorize rules of spec 4.2 and contract section 3. */
@Injectable()
export class AuthorizeService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: ConsoleClientRows,
    private readonly flows: ControlFlowsStore,
  ) {}

  async authorize(query: AuthorizeQuery): Promise<AuthorizeOutcome> {
    const one = (name: string): string | undefined => (typeof query[name] === 'string' ? query[name] : undefined);
    const clientId = one('client_id');
    const redirectUri = one('redirect_uri');
    if (clientId !== this.config.consoleClientId) return { kind: 'reject', message: 'Unknown client.' };
    const client = await this.clients.find(clientId);
    if (!client || !client.enabled || client.tenantId !== CONTROL_PLANE_TENANT_ID)
      return { kind: 'reject', message: 'Unknown client.' };
    if (!redirectUri || !client.redirectUris.includes(redirectUri))
      return { kind: 'reject', message: 'The redirect URI is not registered for this client.' };

    const state = one('state');
    const fail = (error: string, description: string): AuthorizeOutcome => {
      const url = new URL(redirectUri);
      url.searchParams.set('error', error);
      url.searchParams.set('error_description', description);
      if (state !== undefined && STATE.test(state)) url.searchParams.set('state', state);
      url.searchParams.set('iss', controlPlaneIssuer(this.config));
      return { kind: 'redirect', location: url.toString() };
    };
    const repeated = Object.entries(query).find(([, v]) => Array.isArray(v));
    if (repeated) return fail('invalid_request', `Parameter ${repeated[0]} is repeated.`);
    if (one('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
    if (state === undefined || !STATE.test(state)) return fail('invalid_request', 'state is required.');
    if (one('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
    const codeChallenge = one('code_challenge');
    if (!codeChallenge || !CODE_CHALLENGE.test(codeChallenge))
      return fail('invalid_request', 'code_challenge must be an S256 challenge.');
    const scopes = (one('scope') ?? '').split(' ');
    if (!scopesGrantable(scopes, MANAGEMENT_SCOPES, client.scopes))
      return fail('invalid_scope', 'scope must be unique management scopes the client is allowed.');
    const { flowId, cookie } = await this.flows.create({
      clientId,
      redirectUri,
      state,
      codeChallenge,
      scope: scopes.join(' '),
    });
    return { kind: 'form', flowId, cookie };
  }
}

/**
 * Spec 4.2: unique management scopes, every one of them allowed to the client; one scope the
 * client may not have refuses the whole request rather than being granted alongside the others.
 */
export function scopesGrantable(
  requested: readonly string[],
  known: readonly string[],
  allowed: readonly string[],
): boolean {
  return (
    requested.length > 0 &&
    new Set(requested).size === requested.length &&
    requested.every((s) => known.includes(s) && allowed.includes(s))
  );
}
