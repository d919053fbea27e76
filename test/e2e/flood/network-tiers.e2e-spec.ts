import { randomBytes } from 'node:crypto';
import { MetricsService } from '../../../src/platform/metrics/metrics.service';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { authorizeQuery, pkcePair } from '../../support/management-flow';
import { redisFootprint } from '../../support/redis-memory';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Contract section 10: per-network budgets see whole networks. Besides the client's own network
 * (IPv4 /32, IPv6 /64), every anonymous write counts against the IPv4 /24 and the IPv6 /56 and
 * /48 around it, each with a budget of its own, so addresses spread over one routed /48 (65,536
 * /64s) share a bound. A coarse tier that refuses is counted in a metric and logged.
 */
describe('hierarchical network budgets', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(
      {
        TRUST_PROXY: 'true',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_IP_AUTHORIZE: '1000/60',
        RATE_LIMIT_NET_IPV4_24: '3/3600',
        RATE_LIMIT_NET_IPV6_56: '3/3600',
        RATE_LIMIT_NET_IPV6_48: '5/3600',
      },
      { logLines: lines },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const authorize = (ip: string) =>
    t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(t, pkcePair(), randomBytes(8).toString('hex')))
      .set('X-Forwarded-For', ip);
  const statuses = async (ips: readonly string[]): Promise<number[]> => {
    const out: number[] = [];
    for (const ip of ips) out.push((await authorize(ip)).status);
    return out;
  };
  const tierRefusals = async (tier: string): Promise<number> => {
    const metric = await t.app.get(MetricsService).networkTierRefusals.get();
    return metric.values.filter((v) => v.labels.tier === tier).reduce((sum, v) => sum + v.value, 0);
  };

  it('throttles a spread of /64s over one /48 by the /48 tier, and counts and logs it', async () => {
    // Five /56s of one /48, one address each: no /64 and no /56 is near its own budget.
    const spread = [1, 2, 3, 4, 5].map((n) => `2001:db8:48:${n}00::${n}`);
    expect(await statuses(spread)).toEqual([200, 200, 200, 200, 200]);
    const before = await redisFootprint(t);
    const refused = await authorize('2001:db8:48:ff00::1');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Refused by the coarse tier, nothing is charged to the finer ones: nothing is written.
    const after = await redisFootprint(t);
    expect(after.keys).toBeLessThanOrEqual(before.keys);
    expect(after.bytes).toBeLessThanOrEqual(before.bytes);
    expect(await tierRefusals('ipv6-48')).toBe(1);
    expect(lines.some((l) => l.includes('coarse network budget') && l.includes('ipv6-48'))).toBe(true);
    // Another /48 goes on.
    expect((await authorize('2001:db8:49:100::1')).status).toBe(200);
  });

  it('throttles /64s of one /56 by the /56 tier', async () => {
    const spread = [1, 2, 3].map((n) => `2001:db8:56:10${n}::1`);
    expect(await statuses(spread)).toEqual([200, 200, 200]);
    expect((await authorize('2001:db8:56:1ff::1')).status).toBe(429);
    expect(await tierRefusals('ipv6-56')).toBe(1);
    expect((await authorize('2001:db8:56:200::1')).status).toBe(200);
  });

  it('throttles addresses of one IPv4 /24 by the /24 tier', async () => {
    expect(await statuses(['203.0.113.1', '203.0.113.2', '203.0.113.3'])).toEqual([200, 200, 200]);
    expect((await authorize('203.0.113.4')).status).toBe(429);
    expect(await tierRefusals('ipv4-24')).toBe(1);
    expect((await authorize('203.0.114.1')).status).toBe(200);
  });
});

describe('a tenant-wide ceiling on guest creation', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ TRUST_PROXY: 'true', RATE_LIMIT_GUEST_CREATE_TENANT: '3/3600' });
  });
  afterAll(async () => {
    await w.close();
  });

  const create = (tenant: string, client: string, ip: string) =>
    w.t
      .auth()
      .post(`/t/${tenant}/guest`)
      .set('X-Forwarded-For', ip)
      .send({ client_id: client, browser_flow_id: `flw_${randomBytes(16).toString('base64url')}` });

  it('refuses guests of one tenant from any network once its ceiling is spent, and no other tenant', async () => {
    for (const ip of ['198.51.100.1', '2001:db8:a::1', '192.0.2.1'])
      expect((await create('acme', 'cli_game', ip)).status).toBe(201);
    const refused = await create('acme', 'cli_game', '2001:db8:b::1');
    expect(refused.status).toBe(429);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect((await create('beta', 'cli_beta', '2001:db8:b::1')).status).toBe(201);
  });
});

describe('the tenant ceiling and the address budgets of guest creation, in one script', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({
      TRUST_PROXY: 'true',
      RATE_LIMIT_GUEST_CREATE_TENANT: '3/3600',
      RATE_LIMIT_GUEST_CREATE_CLIENT_IP: '1/3600',
    });
  });
  afterAll(async () => {
    await w.close();
  });

  const create = (ip: string) =>
    w.t
      .auth()
      .post('/t/acme/guest')
      .set('X-Forwarded-For', ip)
      .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(16).toString('base64url')}` });

  it('never spends the ceiling on a request its address refuses', async () => {
    expect((await create('198.51.100.7')).status).toBe(201);
    // Refused by the address's budget: none of them takes a token from the tenant's ceiling.
    for (let i = 0; i < 5; i++) expect((await create('198.51.100.7')).status).toBe(429);
    expect((await create('198.51.100.8')).status).toBe(201);
    expect((await create('2001:db8:c::1')).status).toBe(201);
    // Three guests: the ceiling is spent now, for every network.
    expect((await create('2001:db8:d::1')).status).toBe(429);
  });
});
