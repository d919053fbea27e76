import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';

export interface TestSecrets {
  CONSOLE_CLIENT_SECRET: string;
  CONSOLE_SESSION_KEY: string;
  PRIVACY_KEY: string;
  SIGNING_KEYS: string;
}

/** Generated once per test run by the global setup; every suite reads the same file. */
export async function writeTestSecrets(): Promise<void> {
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const ec = await generateKeyPair('ES256', { extractable: true });
  const keys = [
    { ...(await exportJWK(rsa.privateKey)), alg: 'RS256', use: 'sig', kid: 'test-rs-1' },
    { ...(await exportJWK(ec.privateKey)), alg: 'ES256', use: 'sig', kid: 'test-es-1' },
  ];
  const secrets: TestSecrets = {
    CONSOLE_CLIENT_SECRET: randomBytes(32).toString('base64url'),
    CONSOLE_SESSION_KEY: randomBytes(32).toString('base64url'),
    PRIVACY_KEY: randomBytes(32).toString('base64url'),
    SIGNING_KEYS: JSON.stringify({ keys }),
  };
  writeFileSync(secretsFile(), JSON.stringify(secrets), { mode: 0o600 });
}

export function readTestSecrets(): TestSecrets {
  return JSON.parse(readFileSync(secretsFile(), 'utf8')) as TestSecrets;
}

function secretsFile(): string {
  return process.env.SVC_TEST_SECRETS_FILE ?? join(tmpdir(), 'svc-auth-test-secrets.json');
}

export function testSecretsExist(): boolean {
  return existsSync(secretsFile());
}
