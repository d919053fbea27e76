import { createHash, randomBytes } from 'node:crypto';
import { consoleBasic, CONSOLE_CLIENT_ID, type ServiceUnderTest } from './service-agents';

export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

export function pkcePair(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface StartedFlow {
  readonly flowId: string;
  /** `name=value` of the flow cookie, ready for a Cookie header. */
  readonly cookie: string;
  readonly state: string;
  readonly pkce: Pkce;
}

export function callbackUri(t: ServiceUnderTest): string {
  return `${t.consoleOrigin}/api/auth/callback`;
}

export function authorizeQuery(
  t: ServiceUnderTest,
  pkce: Pkce,
  state: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const q: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: callbackUri(t),
    scope: 'tenant:read',
    state,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
  return Object.fromEntries(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined));
}

export async function startFlow(t: ServiceUnderTest, extra: Record<string, string> = {}): Promise<StartedFlow> {
  const pkce = pkcePair();
  const state = randomBytes(16).toString('base64url');
  const res = await t
    .auth()
    .get('/management-auth/authorize')
    .query(authorizeQuery(t, pkce, state, extra))
    .expect(200);
  const flowId = /data-flow-id="(flw_[A-Za-z0-9_-]+)"/.exec(res.text)?.[1];
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = setCookie.find((c) => c.startsWith('__Host-svc_control_flow='))?.split(';')[0];
  if (!flowId || !cookie) throw new Error('authorize did not start a flow');
  return { flowId, cookie, state, pkce };
}

export function emailPost(
  t: ServiceUnderTest,
  path: 'start' | 'confirm',
  flow: StartedFlow,
  body: Record<string, unknown>,
) {
  return t
    .auth()
    .post(`/management-auth/email/${path}`)
    .set('Origin', t.authOrigin)
    .set('Cookie', flow.cookie)
    .send({ flow_id: flow.flowId, ...body });
}

export async function requestCode(t: ServiceUnderTest, flow: StartedFlow, email: string): Promise<string> {
  const after = t.smtp.messages.length;
  await emailPost(t, 'start', flow, { email }).expect(202);
  return t.smtp.waitForCode(email, { after });
}

/** Returns the authorization code from the confirm answer's redirect_to. */
export async function confirmCode(
  t: ServiceUnderTest,
  flow: StartedFlow,
  email: string,
  code: string,
): Promise<string> {
  const res = await emailPost(t, 'confirm', flow, { email, code }).expect(200);
  const redirect = new URL(res.body.redirect_to as string);
  const authorizationCode = redirect.searchParams.get('code');
  if (!authorizationCode) throw new Error('no code in redirect_to');
  return authorizationCode;
}

export function tokenRequest(
  t: ServiceUnderTest,
  body: Record<string, string>,
  authorization: string = consoleBasic(t),
) {
  return t.auth().post('/management-auth/token').set('Authorization', authorization).type('form').send(body);
}

export interface ManagementTokens {
  readonly access_token: string;
  readonly refresh_token: string;
  readonly session_id: string;
  readonly expires_in: number;
  readonly scope: string;
  readonly token_type: string;
}

/** The scopes the console asks for (contract 15): reads and changes. */
export const CONSOLE_SCOPES = 'tenant:read tenant:write';

/** Full sign-in at the API: authorize, email code over SMTP, confirm, code exchange. */
export async function signIn(t: ServiceUnderTest, email: string, scope = 'tenant:read'): Promise<ManagementTokens> {
  const flow = await startFlow(t, { scope });
  const code = await requestCode(t, flow, email);
  const authorizationCode = await confirmCode(t, flow, email, code);
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: authorizationCode,
    redirect_uri: callbackUri(t),
    code_verifier: flow.pkce.verifier,
  }).expect(200);
  return res.body as ManagementTokens;
}
