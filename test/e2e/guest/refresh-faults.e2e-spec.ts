import { createServer, connect, type Server, type Socket } from 'node:net';
import Redis from 'ioredis';
import {
  rawGuest as guest,
  refreshGrant as refresh,
  startGuestWorld,
  type GuestWorld,
} from '../../support/guest-fixtures';
import { PrivateRedis } from '../../support/private-redis';
import { freePort } from '../../support/test-app';

/**
 * Contract 13: a refresh answered 503 never leaves the caller without a usable token. Either
 * nothing rotated, or the rotation ran behind the 503 (a command that timed out while Redis
 * stalled, or whose answer was lost with its connection) and the retry falls under the reuse rule.
 * ioredis must not resend a rotation after a reconnect.
 */
/** Another guest's refresh first, so Redis knows the scripts and runs the next call by its hash. */
async function warmGuest(w: GuestWorld): Promise<{ refresh: string; sessionId: string }> {
  await refresh(w, (await guest(w)).refresh).expect(200);
  return guest(w);
}

/** Retries while the service answers 503 (its Redis connection coming back), as the SDK does. */
async function untilServed(send: () => Promise<{ status: number }>): Promise<{ status: number; body?: unknown }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await send();
    if (res.status !== 503 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a refresh whose Redis stalls past the command timeout', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  let admin: Redis;
  beforeAll(async () => {
    redis = await PrivateRedis.start(['--enable-debug-command', 'yes']);
    w = await startGuestWorld({ RATE_LIMITS: 'off', REDIS_URL: redis.url, DEPENDENCY_TIMEOUT_MS: '300' });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await w.close();
    await redis.stop();
  });

  it('answers 503, rotates once Redis wakes, and the retry with the same token is answered', async () => {
    const g = await warmGuest(w);
    const stall = admin.call('DEBUG', 'SLEEP', '1');
    await new Promise((r) => setTimeout(r, 50));
    const during = await refresh(w, g.refresh);
    expect({ status: during.status, error: during.body.error }).toEqual({
      status: 503,
      error: 'temporarily_unavailable',
    });
    await stall;
    // The rotation ran after all: the caller holds a token that is no longer the current one.
    expect(await w.t.redis.hget(`s:{${g.sessionId}}`, 'gen')).toBe('1');
    const retry = await untilServed(() => refresh(w, g.refresh));
    expect(retry.status).toBe(200);
    await refresh(w, (retry.body as { refresh_token: string }).refresh_token).expect(200);
  });
});

/**
 * A TCP hop between the service and Redis that, when armed, passes the next script call on to
 * Redis and then drops both connections without relaying the answer: the rotation runs, and its
 * answer is lost with the connection.
 */
class DroppingHop {
  armed = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(upstreamPort: number): Promise<DroppingHop> {
    const port = await freePort();
    const server = createServer();
    const hop = new DroppingHop(server, port);
    server.on('connection', (client) => hop.relay(client, upstreamPort));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return hop;
  }

  private relay(client: Socket, upstreamPort: number): void {
    const upstream = connect(upstreamPort, '127.0.0.1');
    let dropping = false;
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      upstream.write(chunk);
      if (this.armed && /EVAL/i.test(chunk.toString('latin1'))) {
        this.armed = false;
        dropping = true;
        setTimeout(() => {
          client.destroy();
          upstream.destroy();
        }, 150);
      }
    });
    upstream.on('data', (chunk) => {
      if (!dropping) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('a refresh whose Redis connection drops before the answer', () => {
  let redis: PrivateRedis;
  let hop: DroppingHop;
  let w: GuestWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    hop = await DroppingHop.start(redis.port);
    w = await startGuestWorld({ RATE_LIMITS: 'off', REDIS_URL: `redis://127.0.0.1:${hop.port}` });
  });
  afterAll(async () => {
    await w.close();
    await hop.stop();
    await redis.stop();
  });

  it('answers 503 at once, never resends the rotation, and the retry is answered', async () => {
    const g = await warmGuest(w);
    hop.armed = true;
    const lost = await refresh(w, g.refresh);
    expect({ status: lost.status, error: lost.body.error }).toEqual({ status: 503, error: 'temporarily_unavailable' });
    const direct = new Redis(redis.url, { keyPrefix: w.t.env.REDIS_KEY_PREFIX });
    try {
      // The rotation ran exactly once: a resend after the reconnect would have counted twice.
      await new Promise((r) => setTimeout(r, 500));
      expect(await direct.hget(`s:{${g.sessionId}}`, 'gen')).toBe('1');
    } finally {
      direct.disconnect();
    }
    const retry = await untilServed(() => refresh(w, g.refresh));
    expect(retry.status).toBe(200);
    await refresh(w, (retry.body as { refresh_token: string }).refresh_token).expect(200);
  });
});
