#!/usr/bin/env node
// Writes development secrets once into a git-ignored env file (default .env.local). An existing
// file is kept, so a developer's sessions and keys survive restarts of the demo.
'use strict';
const { randomBytes } = require('node:crypto');
const { existsSync, writeFileSync } = require('node:fs');
const { exportJWK, generateKeyPair } = require('jose');

const random32 = () => randomBytes(32).toString('base64url');

async function generateSecrets() {
  const stamp = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  const suffix = () => randomBytes(3).toString('hex');
  const rsa = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const ec = await generateKeyPair('ES256', { extractable: true });
  const keys = [
    { ...(await exportJWK(rsa.privateKey)), alg: 'RS256', use: 'sig', kid: `rs-${stamp}-${suffix()}` },
    { ...(await exportJWK(ec.privateKey)), alg: 'ES256', use: 'sig', kid: `es-${stamp}-${suffix()}` },
  ];
  return {
    CONSOLE_CLIENT_SECRET: random32(),
    CONSOLE_SESSION_KEY: random32(),
    PRIVACY_KEY: random32(),
    SIGNING_KEYS: JSON.stringify({ keys }),
  };
}

async function main() {
  const file = process.argv[2] || '.env.local';
  if (existsSync(file)) {
    console.log(`dev secrets: kept ${file}`);
    return;
  }
  const secrets = await generateSecrets();
  const lines = ['# Development secrets, generated once by scripts/dev-secrets.js. Never commit this file.'];
  for (const [k, v] of Object.entries(secrets)) lines.push(`${k}='${v}'`);
  // 'wx' refuses to overwrite a file that appeared since the check above.
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
  console.log(`dev secrets: wrote ${file}`);
}

module.exports = { generateSecrets };
if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
