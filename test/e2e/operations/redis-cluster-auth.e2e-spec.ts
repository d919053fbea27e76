import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { rawGuest, refreshGrant, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { startTestApp } from '../../support/test-app';

const SCRIPT = join(__dirname, '../../../scripts/redis-cluster.sh');
// Ports of this suite's own cluster, apart from the cluster pass's 7101-7103.
const BASE_PORT = '7301';
const PASSWORD = randomBytes(12).toString('hex');

/**
 * With REDIS_CLUSTER_NODES, the nodes' addresses come from that list and the credentials from
 * REDIS_URL: a cluster that requires a password serves the service, and one the service cannot
 * authenticate to is a Redis outage, answered 503, never a token.
 */
describe('a Redis Cluster that requires a password', () => {
  let nodes: string;
  let w: GuestWorld;

  beforeAll(async () => {
    nodes = execFileSync('bash', [SCRIPT, 'start', BASE_PORT], {
      encoding: 'utf8',
      env: { ...process.env, REDIS_CLUSTER_PASSWORD: PASSWORD },
    }).trim();
    w = await startGuestWorld({
      REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${BASE_PORT}`,
      REDIS_CLUSTER_NODES: nodes,
    });
  }, 60_000);
  afterAll(async () => {
    await w?.close();
    execFileSync('bash', [SCRIPT, 'stop', BASE_PORT], {
      env: { ...process.env, REDIS_CLUSTER_PASSWORD: PASSWORD },
    });
  });

  it('serves with the password REDIS_URL names: a guest is created, refreshed, and lives in the cluster', async () => {
    const guest = await rawGuest(w);
    await refreshGrant(w, guest.refresh).expect(200);
    expect(await w.t.redisKeys()).toContain(`s:{${guest.sessionId}}`);
  });

  it('without the password, fails closed: 503 temporarily_unavailable and no token', async () => {
    const unauthenticated = await startTestApp(
      { REDIS_URL: `redis://127.0.0.1:${BASE_PORT}`, REDIS_CLUSTER_NODES: nodes },
      { shareWith: w.t },
    );
    try {
      const res = await unauthenticated
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` });
      expect({ status: res.status, error: res.body.error, token: res.body.access_token }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        token: undefined,
      });
    } finally {
      await unauthenticated.close();
    }
  }, 30_000);
});
