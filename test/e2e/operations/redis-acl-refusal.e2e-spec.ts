import { randomBytes } from 'node:crypto';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { PrivateRedis } from '../../support/private-redis';

/**
 * Issue 22, point 6 and contract section 10: a Redis whose ACL no longer lets the service run a
 * command (NOPERM, or its wording inside a script) is a deployment state like a changed password:
 * 503 temporarily_unavailable, never 500, and the service recovers once the ACL is put right.
 */
describe('a Redis ACL that refuses the service', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
    await redis.stop();
  });

  it.each([
    ['every command (NOPERM)', ['-@all']],
    ['a command inside the rotation script', ['-hset']],
  ])('a refresh refused %s answers 503 temporarily_unavailable, then works again', async (_, rules) => {
    const flow = `flw_${randomBytes(18).toString('base64url')}`;
    const created = await w.t.auth().post('/t/acme/guest').send({ client_id: 'cli_game', browser_flow_id: flow });
    const body = { grant_type: 'refresh_token', refresh_token: created.body.refresh_token, client_id: 'cli_game' };
    const answers: Array<{ status: number; error?: string }> = [];
    for (const may of [rules, []]) {
      await redis.serviceMay(...may);
      const res = await w.t.auth().post('/t/acme/token').type('form').send(body);
      answers.push({ status: res.status, error: res.body.error });
    }
    expect(answers).toEqual([{ status: 503, error: 'temporarily_unavailable' }, { status: 200 }]);
  });
});
