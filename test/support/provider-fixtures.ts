import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, type AdminRun } from './admin-cli';
import type { GuestWorld } from './guest-fixtures';
import { appleTeam, TestBrowser, TestIssuer, type AppleTeam, type IssuerAccount } from './oidc-issuer';

/** The native app's client id at the plain issuer (its bundle id), and where its code flow returns. */
export const NATIVE_APP_ID = 'com.acme.game';
const NATIVE_REDIRECT = 'http://native.game.invalid/cb';

export interface ProviderWorld {
  /** A plain OpenID Connect issuer, added to `acme` as `google` (client_secret_basic). */
  readonly plain: TestIssuer;
  /** An issuer configured like Sign in with Apple, added to `acme` as `apple`. */
  readonly apple: TestIssuer;
  readonly team: AppleTeam;
  /** `provider add` for `acme` with the plain issuer's web client; extra options appended. */
  addPlain(id: string, ...extra: string[]): Promise<AdminRun>;
  /** A file holding `text`, for the CLI's --…-file options. */
  file(text: string): string;
  stop(): Promise<void>;
}

/**
 * Starts both test issuers with the service's callback as the web client's redirect URI and adds
 * them to `acme` with the admin CLI (discovery read and checked), as `google` and `apple`.
 */
export async function startProviders(w: GuestWorld): Promise<ProviderWorld> {
  const callback = `${w.t.authOrigin}/t/acme/providers/callback`;
  const team = appleTeam();
  const [plain, apple] = await Promise.all([
    TestIssuer.start([
      { client_id: 'web-client', client_secret: 'web-secret', redirect_uris: [callback] },
      { client_id: NATIVE_APP_ID, client_secret: 'native-secret', redirect_uris: [NATIVE_REDIRECT] },
    ]),
    TestIssuer.start(
      [{ client_id: 'com.acme.web', client_secret: 'apple-registered', redirect_uris: [callback] }],
      team,
    ),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'svc-providers-'));
  const file = (text: string): string => {
    const path = join(dir, randomBytes(6).toString('hex'));
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const addPlain = (id: string, ...extra: string[]) =>
    addProvider(
      w,
      id,
      plain.issuer,
      'web-client',
      '--client-secret-file',
      file('web-secret\n'),
      '--native-client-ids',
      NATIVE_APP_ID,
      ...extra,
    );
  const google = await addPlain('google');
  if (google.status !== 0) throw new Error(`provider add google: ${google.stderr}`);
  const added = await addProvider(
    w,
    'apple',
    apple.issuer,
    'com.acme.web',
    '--apple-team-id',
    team.teamId,
    '--apple-key-id',
    team.keyId,
    '--apple-private-key-file',
    file(team.privateKeyPem),
  );
  if (added.status !== 0) throw new Error(`provider add apple: ${added.stderr}`);
  return {
    plain,
    apple,
    team,
    addPlain,
    file,
    async stop() {
      await Promise.all([plain.stop(), apple.stop()]);
    },
  };
}

/** `provider add` for `acme`; `credential` and any other options appended (a secret only ever from a file). */
export function addProvider(
  w: GuestWorld,
  id: string,
  issuer: string,
  clientId: string,
  ...credential: string[]
): Promise<AdminRun> {
  return admin(
    w.t.env,
    'provider',
    'add',
    '--tenant',
    'acme',
    '--id',
    id,
    '--issuer',
    issuer,
    '--client-id',
    clientId,
    ...credential,
  );
}

/** A browser that knows the auth host (localhost) and the issuers (127.0.0.1), holding a flow cookie. */
export function browserWithFlow(flowId: string, flowCookie: string | undefined): TestBrowser {
  const browser = new TestBrowser(['localhost', '127.0.0.1']);
  if (flowCookie !== undefined) browser.setCookie('localhost', `__Host-svc_flow_${flowId}`, flowCookie);
  return browser;
}

/**
 * A real ID token of the plain issuer for the native app: the authorization code flow with PKCE at
 * the issuer (signed in as `account`), the code exchanged at its token endpoint, as a platform SDK does.
 */
export async function nativeIdToken(issuer: TestIssuer, account: IssuerAccount, nonce: string): Promise<string> {
  await issuer.setAccount(account);
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${issuer.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: NATIVE_APP_ID,
    response_type: 'code',
    scope: 'openid email',
    redirect_uri: NATIVE_REDIRECT,
    state: randomBytes(8).toString('hex'),
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const back = new URL(await new TestBrowser(['127.0.0.1']).navigate(authorize.toString()));
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.toString()}`);
  const res = await fetch(`${issuer.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${NATIVE_APP_ID}:native-secret`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: NATIVE_REDIRECT,
      code_verifier: verifier,
    }).toString(),
  });
  const body = (await res.json()) as { id_token?: string };
  if (!body.id_token) throw new Error(`no id_token: ${JSON.stringify(body)}`);
  return body.id_token;
}
