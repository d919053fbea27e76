import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { AppConfig } from '../../src/config/config';
import { PROBE_PATHS } from '../../src/http/host-routing';
import { httpLogging } from '../../src/platform/logging/logging';

/**
 * Issue 22, point 6: `/readyz` reads PostgreSQL and Redis unauthenticated, so it is logged (a 2xx at
 * debug, a 503 as an error); `/healthz` does no I/O and stays quiet.
 */
describe('request logging of the probes', () => {
  const lines: Array<Record<string, unknown>> = [];
  let server: Server;
  let port: number;
  let ready = true;
  beforeAll(async () => {
    const logging = httpLogging({ logLevel: 'debug' } as AppConfig, {
      unloggedPaths: PROBE_PATHS,
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const app = express();
    app.use(logging.middleware);
    app.get('/readyz', (_req, res) => void res.status(ready ? 200 : 503).json({}));
    app.get('/healthz', (_req, res) => void res.json({}));
    server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const get = (path: string, id: string) =>
    new Promise<void>((resolve) => {
      httpRequest({ port, path, headers: { 'x-request-id': id } }, (res) => {
        res.resume();
        res.on('end', resolve);
      }).end();
    });
  const linesOf = async (id: string) => {
    for (let i = 0; i < 50 && !lines.some((l) => (l.req as { id?: string } | undefined)?.id === id); i++)
      await new Promise((r) => setTimeout(r, 10));
    return lines.filter((l) => (l.req as { id?: string } | undefined)?.id === id);
  };

  it('logs a ready /readyz once, at debug', async () => {
    ready = true;
    await get('/readyz', 'id-ready');
    expect(await linesOf('id-ready')).toEqual([
      expect.objectContaining({
        level: 20,
        msg: 'request completed',
        req: expect.objectContaining({ path: '/readyz' }),
      }),
    ]);
  });

  it('logs a failing /readyz as an error', async () => {
    ready = false;
    await get('/readyz', 'id-not-ready');
    expect(await linesOf('id-not-ready')).toEqual([
      expect.objectContaining({ level: 50, msg: 'request failed', res: { statusCode: 503 } }),
    ]);
  });

  it('keeps /healthz quiet, even at debug', async () => {
    await get('/healthz', 'id-healthz');
    await get('/readyz', 'id-after');
    await linesOf('id-after');
    expect(await linesOf('id-healthz')).toHaveLength(0);
  });
});
