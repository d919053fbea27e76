import { ConfigError, loadConfig } from '../../src/config/config';

type Env = Record<string, string | undefined>;

/** The console client secret of localConfigEnv(): tests check it is never printed. */
export const CONFIG_SECRET_VALUE = 'a-very-secret-value-that-must-never-be-printed-123456';

const SIGNING_KEY_SHAPES = JSON.stringify({
  keys: [
    { kty: 'RSA', alg: 'RS256', kid: 'r1', n: 'x', e: 'AQAB', d: 'y' },
    { kty: 'EC', crv: 'P-256', alg: 'ES256', kid: 'e1', x: 'x', y: 'y', d: 'z' },
  ],
});

/**
 * A complete configuration for unit tests of the configuration, on the contract's local origins
 * (section 8), with secrets of the right shapes (the signing keys are shapes only;
 * `assertKeysUsable` would refuse them). An override of `undefined` removes a variable.
 */
export function localConfigEnv(overrides: Env = {}): Env {
  return {
    AUTH_ORIGIN: 'http://localhost:3000',
    CONSOLE_ORIGIN: 'http://127.0.0.1:3000',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    CONSOLE_CLIENT_ID: 'cli_console',
    CONSOLE_CLIENT_SECRET: CONFIG_SECRET_VALUE,
    CONSOLE_SESSION_KEY: Buffer.alloc(32, 7).toString('base64url'),
    PRIVACY_KEY: Buffer.alloc(32, 9).toString('base64url'),
    SIGNING_KEYS: SIGNING_KEY_SHAPES,
    ...overrides,
  };
}

/** The same in production, on https origins. */
export function productionConfigEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ...(localConfigEnv() as Record<string, string>),
    NODE_ENV: 'production',
    AUTH_ORIGIN: 'https://auth.example.com',
    CONSOLE_ORIGIN: 'https://console.example.com',
    ...overrides,
  };
}

/** The problems loadConfig names for `env`, none when it loads. */
export function configProblems(env: Env): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}
