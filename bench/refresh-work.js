#!/usr/bin/env node
// The refresh grant's own work without HTTP: the service's SessionStore rotation script in Redis
// and its ManagementTokens signing through jose, as many chains at once as the benchmark has
// connections (WORK_CHAINS). `npm run bench` runs this pinned to the server's core and prints the
// ceiling it sets on the refresh ratio: what the route would reach if its HTTP pipeline cost no
// more than the floor.
// Prints one JSON line: {rps, cpuUsPerOp}.
'use strict';
require('reflect-metadata');
const Redis = require('ioredis');
const { SessionStore } = require('../dist/src/platform/session-store/session-store');
const { ManagementTokens } = require('../dist/src/management-auth/management-tokens');
const { KeyRing } = require('../dist/src/platform/keys/key-ring');
const { Pseudonymizer } = require('../dist/src/platform/crypto/digests');
const { CONTROL_PLANE_TENANT_ID } = require('../dist/src/directory/tenants.repository');

const CHAINS = Number(process.env.WORK_CHAINS || 50);
const SECONDS = Number(process.env.WORK_SECONDS || 4);
const REALM = { tenantId: CONTROL_PLANE_TENANT_ID, clientId: 'cli_console' };

async function measure(store, tokens, seconds) {
  let count = 0;
  const until = Date.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CHAINS }, async () => {
      const sessionId = store.newSessionId();
      const created = await store.create(
        { sessionId, ...REALM, userId: 'usr_bench', scope: 'tenant:read', email: 'work@bench.example' },
        3600,
      );
      let refreshToken = created.refreshToken;
      while (Date.now() < until) {
        const rotated = await store.rotate(refreshToken, REALM);
        if (rotated.outcome !== 'rotated') throw new Error(`rotation ${rotated.outcome}`);
        await tokens.issue({ userId: rotated.session.userId, sessionId, scope: rotated.session.scope });
        refreshToken = rotated.refreshToken;
        count++;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { rps: count / elapsed, cpuUsPerOp: (cpu.user + cpu.system) / count };
}

async function main() {
  const signingKeys = JSON.parse(process.env.SIGNING_KEYS).keys;
  const config = {
    authOrigin: 'http://localhost',
    consoleClientId: REALM.clientId,
    ttl: { managementAccessToken: 300 },
    signingKeys,
  };
  const tokens = new ManagementTokens(config, await KeyRing.load(config));
  const redis = new Redis(process.env.REDIS_URL, { keyPrefix: process.env.REDIS_KEY_PREFIX });
  const store = new SessionStore(redis, new Pseudonymizer(Buffer.from(process.env.PRIVACY_KEY, 'base64url')));
  await measure(store, tokens, 1); // warm-up: JIT, script cache
  const result = await measure(store, tokens, SECONDS);
  redis.disconnect();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  process.stderr.write(`refresh-work: ${err.message}\n`);
  process.exit(1);
});
