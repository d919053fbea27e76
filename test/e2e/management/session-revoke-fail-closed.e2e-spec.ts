import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import type { Response } from 'supertest';
import { createClient } from '../../support/console-fixtures';
import { startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';
import { eventually } from '../../support/eventually';
import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';

/**
 * Promise (b) for `POST /management/tenants/{id}/sessions/{sessionId}/revoke` (contract 15), which
 * the management fail-closed suites do not call: with Redis stalled, then with PostgreSQL refusing
 * connections, it answers 503 temporarily_unavailable, the session stays live (its refresh token
 * still works), no row or audit event is written; once the dependency is back the same call revokes.
 */
const T = '/management/tenants/acme';
const flowId = (): string => `flw_${randomBytes(18).toString('base64url')}`;

interface Guest {
  readonly session_id: string;
  readonly refresh_token: string;
}

const answer = (r: Response) => ({ status: r.status, body: r.body as unknown });
const REFUSED = {
  status: 503,
  body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
};

/** The session's row and the audit rows a revocation writes, on the connection given. */
async function state(pg: Pick<Client, 'query'>, sessionId: string) {
  const session = await pg.query(`SELECT revoked_at FROM sessions WHERE id = $1`, [sessionId]);
  const audit = await pg.query(
    `SELECT count(*)::int AS n FROM audit_events WHERE type IN ('session.revoked', 'console.session.revoke')`,
  );
  return { session: session.rows, audit: audit.rows[0] as unknown };
}

function describeOutage(
  name: string,
  setUp: () => Promise<{
    w: ConsoleTenant;
    outage: PostgresOutage | null;
    cut: () => Promise<void>;
    back: () => Promise<void>;
    end: () => Promise<void>;
  }>,
) {
  describe(name, () => {
    let env: Awaited<ReturnType<typeof setUp>>;
    beforeAll(async () => {
      env = await setUp();
      await createClient(env.w.t, 'acme', {
        id: 'cli_acme_web',
        name: 'Acme Web',
        scopes: ['openid', 'offline_access'],
      });
    });
    afterAll(async () => {
      await env.end();
    });

    it('answers 503, keeps the session and writes nothing; revokes once the dependency is back', async () => {
      const { w, outage } = env;
      const t = w.t;
      const guest = async (): Promise<Guest> =>
        (
          await t
            .auth()
            .post('/t/acme/guest')
            .send({ client_id: 'cli_acme_web', browser_flow_id: flowId() })
            .expect(201)
        ).body as Guest;
      const refresh = (g: Guest) =>
        t
          .auth()
          .post('/t/acme/token')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: g.refresh_token, client_id: 'cli_acme_web' });
      const g = await guest();
      const revoke = () => w.as('admin').post(`${T}/sessions/${g.session_id}/revoke`);
      const before = await state(t.pg, g.session_id);
      expect(before.session).toEqual([{ revoked_at: null }]);

      await env.cut();
      try {
        expect(answer(await revoke())).toEqual(REFUSED);
      } finally {
        await env.back();
      }
      await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
      const read = (pg: Pick<Client, 'query'>) => state(pg, g.session_id);
      expect(await (outage ? outage.fresh(read) : read(t.pg))).toEqual(before);
      // The session is live: its refresh token still rotates.
      const rotated = await refresh(g);
      expect(rotated.status).toBe(200);

      // Back: the same call revokes it, and the refresh is refused from then on.
      expect(answer(await revoke())).toEqual({ status: 200, body: { revoked: true } });
      expect((await refresh({ ...g, refresh_token: rotated.body.refresh_token as string })).status).toBe(400);
      const after = await (outage ? outage.fresh(read) : read(t.pg));
      expect(after.session).toEqual([{ revoked_at: expect.any(Date) }]);
      expect(after.audit).toEqual({ n: (before.audit as { n: number }).n + 2 });
    });
  });
}

describeOutage('session revoke with Redis stalled', async () => {
  const redis = await PrivateRedis.start();
  const w = await startConsoleTenant({ REDIS_URL: redis.url, DEPENDENCY_TIMEOUT_MS: '500' });
  return {
    w,
    outage: null,
    cut: () => Promise.resolve(redis.pause()),
    back: () => Promise.resolve(redis.resume()),
    end: async () => {
      redis.resume();
      await w.close();
      await redis.stop();
    },
  };
});

describeOutage('session revoke with PostgreSQL refusing connections', async () => {
  const w = await startConsoleTenant({ DEPENDENCY_TIMEOUT_MS: '500' });
  const outage = await PostgresOutage.of(w.t.databaseName);
  return {
    w,
    outage,
    cut: () => outage.cut(),
    back: () => outage.restore(),
    end: async () => {
      await outage.end();
      await w.close();
    },
  };
});
