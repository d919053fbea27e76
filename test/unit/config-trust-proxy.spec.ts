import { ConfigError, loadConfig } from '../../src/config/config';

const rsa = { kty: 'RSA', alg: 'RS256', kid: 'r1', n: 'x', e: 'AQAB', d: 'y' };
const ec = { kty: 'EC', crv: 'P-256', alg: 'ES256', kid: 'e1', x: 'x', y: 'y', d: 'z' };

function baseEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    AUTH_ORIGIN: 'http://localhost:3000',
    CONSOLE_ORIGIN: 'http://127.0.0.1:3000',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    CONSOLE_CLIENT_ID: 'cli_console',
    CONSOLE_CLIENT_SECRET: 'a-very-secret-value-that-must-never-be-printed-123456',
    CONSOLE_SESSION_KEY: Buffer.alloc(32, 7).toString('base64url'),
    PRIVACY_KEY: Buffer.alloc(32, 9).toString('base64url'),
    SIGNING_KEYS: JSON.stringify({ keys: [rsa, ec] }),
    ...overrides,
  };
}

function problemsOf(e: Record<string, string | undefined>): string[] {
  try {
    loadConfig(e);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('TRUST_PROXY_HOPS (contract section 10: the client IP behind a CDN and a load balancer)', () => {
  it('trusts no proxy by default', () => {
    expect(loadConfig(baseEnv()).trustProxy).toBe(0);
  });

  it('trusts one hop with TRUST_PROXY=true alone', () => {
    expect(loadConfig(baseEnv({ TRUST_PROXY: 'true' })).trustProxy).toBe(1);
  });

  it('trusts TRUST_PROXY_HOPS hops', () => {
    expect(loadConfig(baseEnv({ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' })).trustProxy).toBe(2);
  });

  it.each([
    [{ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '0' }, 'TRUST_PROXY_HOPS: must be an integer from 1 to 10'],
    [{ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: 'two' }, 'TRUST_PROXY_HOPS: must be an integer from 1 to 10'],
    [{ TRUST_PROXY_HOPS: '2' }, 'TRUST_PROXY_HOPS: needs TRUST_PROXY=true'],
  ])('refuses %j', (overrides, problem) => {
    expect(problemsOf(baseEnv(overrides))).toEqual([problem]);
  });
});
