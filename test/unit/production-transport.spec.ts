import { runAdmin } from '../../src/cli/admin-runner';
import { ConfigError, loadConfig, type AppConfig } from '../../src/config/config';
import { httpUrl, isLoopbackHostname } from '../../src/config/secure-transport';
import { checkRedirectUri, checkWebOrigin } from '../../src/directory/web-origins';
import { DependencyUnavailableError } from '../../src/errors/app-error';
import { Mailer, pooledSmtpUrl } from '../../src/platform/mail/mailer';
import { productionConfigEnv } from '../support/config-env';
import { SmtpCatcher } from '../support/smtp-catcher';

const HTTPS_ONLY = 'must use https when NODE_ENV=production (http only for localhost, 127.0.0.0/8 or [::1])';

function problemsOf(overrides: Record<string, string>): string[] {
  try {
    loadConfig(productionConfigEnv(overrides));
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

/** Issue 22, point 6: production refuses cleartext wherever a secret or a credentialed origin travels. */
describe('production refuses non-loopback http at start-up', () => {
  it.each([
    ['AUTH_ORIGIN', 'http://auth.example.com'],
    ['CONSOLE_ORIGIN', 'http://console.example.com'],
    ['AUTH_INTERNAL_URL', 'http://svc-auth:3000'],
    ['AUTH_INTERNAL_URL', 'http://10.0.0.5:3000'],
    ['CHAT_PLATFORM_AUTHORIZE_URL', 'http://chat.example/oauth2/authorize'],
    ['CHAT_PLATFORM_API_BASE', 'http://chat.example/api/v10'],
  ])('%s=%s stops start-up, naming the variable', (name, value) => {
    expect(problemsOf({ [name]: value })).toEqual([`${name}: ${HTTPS_ONLY}`]);
  });

  it.each([
    ['AUTH_ORIGIN', 'http://localhost:3000'],
    ['CONSOLE_ORIGIN', 'http://127.0.0.1:3000'],
    ['CONSOLE_ORIGIN', 'http://127.8.9.10:3000'],
    ['AUTH_INTERNAL_URL', 'http://[::1]:3000'],
    ['AUTH_INTERNAL_URL', 'http://localhost:3000'],
    ['CHAT_PLATFORM_AUTHORIZE_URL', 'http://127.0.0.1:3002/oauth2/authorize'],
    ['CHAT_PLATFORM_API_BASE', 'https://chat.example/api/v10'],
  ])('%s=%s (loopback or https) is accepted', (name, value) => {
    expect(problemsOf({ [name]: value })).toEqual([]);
  });

  it('development and test keep http for any host', () => {
    for (const NODE_ENV of ['development', 'test'])
      expect(
        problemsOf({
          NODE_ENV,
          AUTH_ORIGIN: 'http://auth.internal',
          AUTH_INTERNAL_URL: 'http://svc-auth:3000',
          CHAT_PLATFORM_API_BASE: 'http://chat.internal/api',
        }),
      ).toEqual([]);
  });

  it('refuses a chat-platform URL or AUTH_INTERNAL_URL that is not an http(s) URL, in any mode', () => {
    expect(problemsOf({ NODE_ENV: 'test', CHAT_PLATFORM_API_BASE: 'discord.com/api' })).toEqual([
      'CHAT_PLATFORM_API_BASE: must be an http(s) URL',
    ]);
    expect(problemsOf({ NODE_ENV: 'test', AUTH_INTERNAL_URL: 'ftp://svc-auth' })).toEqual([
      'AUTH_INTERNAL_URL: must be an http(s) URL',
    ]);
  });

  it.each([
    ['localhost', true],
    ['LOCALHOST', true],
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['[::1]', true],
    ['localhost.example', false],
    ['127.0.0.1.example', false],
    ['128.0.0.1', false],
    ['[::ffff:7f00:1]', false],
    ['0.0.0.0', false],
  ])('loopback host %s: %s', (host, loopback) => {
    expect(isLoopbackHostname(host)).toBe(loopback);
  });
});

describe('httpUrl: the one test of an http(s) URL', () => {
  it.each([
    ['https://auth.example.com/x', 'https://auth.example.com/x'],
    ['HTTP://LOCALHOST:3000', 'http://localhost:3000/'],
    ['ftp://files.example', null],
    ['javascript:alert(1)', null],
    ['/relative/path', null],
    ['', null],
  ])('%s', (text, href) => {
    expect(httpUrl(text)?.href ?? null).toBe(href);
  });
});

describe('client redirect URIs and web origins', () => {
  it.each([
    ['https://play.example/cb#x', 'must not have a fragment (#…)'],
    ['https://play.example/cb#', 'must not have a fragment (#…)'],
    ['https://user:pass@play.example/cb', 'must not carry userinfo (user:password@)'],
    ['https://user@play.example/cb', 'must not carry userinfo (user:password@)'],
    ['https://@play.example/cb', 'must not carry userinfo (user:password@)'],
    ['ftp://play.example/cb', 'must be an http(s) URL'],
  ])('refuses the redirect URI %s in any mode', (uri, problem) => {
    expect(checkRedirectUri(uri, false)).toEqual({ problem });
    expect(checkRedirectUri(uri, true)).toEqual({ problem });
  });

  it('refuses cleartext redirect URIs and web origins beyond loopback in production only', () => {
    expect(checkRedirectUri('http://play.example/cb', true)).toEqual({ problem: HTTPS_ONLY });
    expect(checkRedirectUri('http://play.example/cb', false)).toEqual({ url: 'http://play.example/cb' });
    expect(checkRedirectUri('http://127.0.0.1:3001/cb?x=1', true)).toEqual({ url: 'http://127.0.0.1:3001/cb?x=1' });
    expect(checkRedirectUri('https://play.example/cb?x=1', true)).toEqual({ url: 'https://play.example/cb?x=1' });
    expect(checkWebOrigin('http://play.example', true)).toEqual({ problem: HTTPS_ONLY });
    expect(checkWebOrigin('http://play.example', false)).toEqual({ url: 'http://play.example' });
    expect(checkWebOrigin('http://localhost:3001', true)).toEqual({ url: 'http://localhost:3001' });
    expect(checkWebOrigin('https://Play.Example:443', true)).toEqual({ url: 'https://play.example' });
  });

  const create = (env: Record<string, string>, ...extra: string[]) =>
    runAdmin(
      [
        ...['client', 'create', '--tenant', 'acme', '--id', 'cli_web', '--name', 'Web', '--type', 'browser'],
        ...['--scopes', 'openid', ...extra],
      ],
      env,
    );
  const refusal = (stderr: string): unknown => JSON.parse(stderr);

  it('client create refuses them before touching the database, reading NODE_ENV (default production)', async () => {
    for (const env of [{}, { NODE_ENV: 'production' }] as Array<Record<string, string>>) {
      const r = await create(env, '--redirect-uri', 'http://play.example/cb');
      expect([r.status, refusal(r.stderr)]).toEqual([
        1,
        { error: 'invalid_input', message: `--redirect-uri: http://play.example/cb ${HTTPS_ONLY}` },
      ]);
      const o = await create(env, '--redirect-uri', 'https://play.example/cb', '--web-origins', 'http://play.example');
      expect([o.status, refusal(o.stderr)]).toEqual([
        1,
        { error: 'invalid_input', message: `--web-origins: http://play.example ${HTTPS_ONLY}` },
      ]);
    }
  });

  it('client create refuses fragments and userinfo in any mode, without echoing a password', async () => {
    const fragment = await create({ NODE_ENV: 'development' }, '--redirect-uri', 'https://play.example/cb#done');
    expect(refusal(fragment.stderr)).toEqual({
      error: 'invalid_input',
      message: '--redirect-uri: https://play.example/cb#done must not have a fragment (#…)',
    });
    const userinfo = await create({ NODE_ENV: 'test' }, '--redirect-uri', 'https://me:hunter2@play.example/cb');
    expect(refusal(userinfo.stderr)).toEqual({
      error: 'invalid_input',
      message: '--redirect-uri: https://…@play.example/cb must not carry userinfo (user:password@)',
    });
  });

  it('in development, http redirect URIs pass the check and the command goes on to its configuration', async () => {
    const r = await create({ NODE_ENV: 'development' }, '--redirect-uri', 'http://play.example/cb');
    expect(refusal(r.stderr)).toEqual({
      error: 'configuration',
      message: 'invalid configuration: DATABASE_URL: required',
    });
  });

  it('chat configure refuses a cleartext redirect URI in production', async () => {
    const r = await runAdmin(
      [
        ...['chat', 'configure', '--tenant', 'acme', '--client-id', '1', '--client-secret-file', '/dev/null'],
        ...['--redirect-uri', 'http://auth.example.com/t/acme/chat/callback'],
      ],
      { NODE_ENV: 'production' },
    );
    expect(refusal(r.stderr)).toEqual({
      error: 'invalid_input',
      message: `--redirect-uri: http://auth.example.com/t/acme/chat/callback ${HTTPS_ONLY}`,
    });
  });
});

describe('SMTP in production requires STARTTLS', () => {
  it('forces requireTLS (and no ignoreTLS) on smtp:// in production, whatever SMTP_URL says', () => {
    const url = new URL(pooledSmtpUrl('smtp://mail.example:587?requireTLS=false&ignoreTLS=true', 1000, true));
    expect(url.searchParams.get('requireTLS')).toBe('true');
    expect(url.searchParams.get('ignoreTLS')).toBe('false');
    expect(new URL(pooledSmtpUrl('smtps://mail.example:465', 1000, true)).searchParams.has('requireTLS')).toBe(false);
    expect(new URL(pooledSmtpUrl('smtp://mail.example:587', 1000, false)).searchParams.has('requireTLS')).toBe(false);
  });

  it('a server that offers no STARTTLS gets no code in production (503), and does in test', async () => {
    const catcher = await SmtpCatcher.start();
    const mailer = (nodeEnv: AppConfig['nodeEnv']) =>
      new Mailer({
        nodeEnv,
        mail: { transport: 'smtp', smtpUrl: catcher.url, from: 'svc@localhost' },
        dependencyTimeoutMs: 2000,
      } as AppConfig);
    const production = mailer('production');
    const test = mailer('test');
    try {
      await expect(
        production.send({ to: 'player@example.com', subject: 'code', text: 'Your code is 123456.' }),
      ).rejects.toBeInstanceOf(DependencyUnavailableError);
      expect(catcher.messages).toEqual([]);
      await expect(
        test.send({ to: 'player@example.com', subject: 'code', text: 'Your code is 654321.' }),
      ).resolves.toBe('sent');
      expect(await catcher.waitForCode('player@example.com')).toBe('654321');
    } finally {
      production.onApplicationShutdown();
      test.onApplicationShutdown();
      await catcher.stop();
    }
  });
});
