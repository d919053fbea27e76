/**
 * A complete configuration for unit tests of the configuration: production, https origins, and
 * secrets of the right shapes (the signing keys are shapes only; `assertKeysUsable` would refuse them).
 */
export function productionConfigEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    AUTH_ORIGIN: 'https://auth.example.com',
    CONSOLE_ORIGIN: 'https://console.example.com',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    CONSOLE_CLIENT_ID: 'cli_console',
    CONSOLE_CLIENT_SECRET: 'a-console-client-secret-of-enough-length-0123',
    CONSOLE_SESSION_KEY: Buffer.alloc(32, 7).toString('base64url'),
    PRIVACY_KEY: Buffer.alloc(32, 9).toString('base64url'),
    SIGNING_KEYS: JSON.stringify({
      keys: [
        { kty: 'RSA', alg: 'RS256', kid: 'r1', n: 'x', e: 'AQAB', d: 'y' },
        { kty: 'EC', crv: 'P-256', alg: 'ES256', kid: 'e1', x: 'x', y: 'y', d: 'z' },
      ],
    }),
    ...overrides,
  };
}
