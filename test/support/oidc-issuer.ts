import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';

export interface IssuerClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly redirect_uris: string[];
}

/** Sign in with Apple's credentials for a studio: team id, key id and its P-256 key pair (PEM). */
export interface AppleTeam {
  readonly teamId: string;
  readonly keyId: string;
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

export function appleTeam(teamId = 'TEAM123456', keyId = 'KEY1234567'): AppleTeam {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    teamId,
    keyId,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export interface IssuerAccount {
  readonly sub: string;
  readonly email?: string;
  readonly email_verified?: boolean;
}

/**
 * A real OpenID Connect issuer (panva's oidc-provider) in a child process: see
 * oidc-issuer-server.mjs. `apple` makes it behave like Sign in with Apple.
 */
export class TestIssuer {
  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
  ) {}

  /** `loginPage`: a person confirms the sign-in at a page naming the issuer (the demo's, for Chromium). */
  static async start(clients: IssuerClient[], apple?: AppleTeam, loginPage?: { name: string }): Promise<TestIssuer> {
    const child = spawn(process.execPath, [join(__dirname, 'oidc-issuer-server.mjs')], {
      env: {
        ...process.env,
        ISSUER_CONFIG: JSON.stringify({
          clients,
          ...(apple ? { apple: { teamId: apple.teamId, keyId: apple.keyId, publicKeyPem: apple.publicKeyPem } } : {}),
          ...(loginPage ? { loginPage } : {}),
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /READY (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.stderr?.on('data', (d: Buffer) => void (err += d.toString()));
      child.once('exit', (code) => reject(new Error(`test issuer exited with ${code}: ${err}`)));
    });
    return new TestIssuer(child, `http://127.0.0.1:${port}`);
  }

  /** The account the issuer's interaction signs in next. */
  async setAccount(account: IssuerAccount): Promise<void> {
    await this.post('/test/account', account);
  }

  /** An ID token with exactly these claims, signed with the issuer's key (or one it never published). */
  async sign(claims: Record<string, unknown>, opts: { foreign?: boolean } = {}): Promise<string> {
    return ((await this.post('/test/sign', { claims, foreign: opts.foreign === true })) as { id_token: string })
      .id_token;
  }

  /** How each token request so far authenticated. */
  async tokenRequests(): Promise<Array<{ auth: string; code_verifier: boolean }>> {
    return (await (await fetch(`${this.issuer}/test/token-requests`)).json()) as Array<{
      auth: string;
      code_verifier: boolean;
    }>;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  private async post(path: string, body: unknown): Promise<unknown> {
    const res = await fetch(`${this.issuer}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }
}

/**
 * A browser, as far as the flows need one: one cookie jar per host name (as browsers, cookies
 * ignore ports), redirects followed by hand, and an auto-submitting form_post page submitted as a
 * browser's script would. `navigate` stops at the first address outside `hosts` (the game).
 */
export class TestBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  constructor(private readonly hosts: readonly string[]) {}

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    const jar = this.jars.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(host, jar);
  }

  /** Follows redirects from `url` until an address outside the known hosts; returns that address. */
  async navigate(url: string, init: { method?: string; body?: string } = {}): Promise<string> {
    let next: { url: string; method: string; body?: string } = { url, method: init.method ?? 'GET', ...init };
    for (let hop = 0; hop < 20; hop++) {
      const target = new URL(next.url);
      if (!this.hosts.includes(target.hostname)) return next.url;
      const res = await this.fetch(next.url, next.method, next.body);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        next = { url: new URL(location, next.url).toString(), method: res.status === 307 ? next.method : 'GET' };
        continue;
      }
      const html = await res.text();
      const form = /<form[^>]*method="post"[^>]*action="([^"]+)"/i.exec(html);
      if (res.status === 200 && form?.[1]) {
        const fields = new URLSearchParams();
        for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g))
          fields.set(decodeHtml(m[1] ?? ''), decodeHtml(m[2] ?? ''));
        next = { url: decodeHtml(form[1]), method: 'POST', body: fields.toString() };
        continue;
      }
      throw new Error(`browser stopped at ${next.url}: ${res.status} ${html.slice(0, 300)}`);
    }
    throw new Error('too many redirects');
  }

  private async fetch(url: string, method: string, body?: string): Promise<Response> {
    const host = new URL(url).hostname;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    const headers: Record<string, string> = {};
    if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, redirect: 'manual', ...(body === undefined ? {} : { body }) });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }
}

function decodeHtml(s: string): string {
  return s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}
