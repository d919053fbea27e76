import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { AppConfig } from '../../src/config/config';
import { httpLogging } from '../../src/platform/logging/logging';

/** One line per request, at a level that says how it ended. */
describe('request logging', () => {
  const lines: Array<Record<string, unknown>> = [];
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const logging = httpLogging({ logLevel: 'info' } as AppConfig, {
      unloggedPaths: new Set(['/healthz']),
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const app = express();
    app.use(logging.middleware);
    app.get('/ok', (_req, res) => void res.json({}));
    app.get('/boom', (_req, res) => void res.status(500).json({}));
    app.get('/hang', () => undefined);
    app.get('/healthz', (_req, res) => void res.json({}));
    server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const get = (path: string, id: string, abortAfterMs?: number) =>
    new Promise<void>((resolve) => {
      const req = httpRequest({ port, path, headers: { 'x-request-id': id } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => resolve());
      if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
      req.end();
    });
  const lineOf = async (id: string) => {
    for (let i = 0; i < 50 && !lines.some((l) => (l.req as { id?: string } | undefined)?.id === id); i++)
      await new Promise((r) => setTimeout(r, 10));
    return lines.filter((l) => (l.req as { id?: string } | undefined)?.id === id);
  };

  it.each([
    ['/ok?code=123456', 'id-ok', 30, 'request completed', 200],
    ['/boom', 'id-boom', 50, 'request failed', 500],
  ])('logs %s once', async (path, id, level, msg, statusCode) => {
    await get(path, id);
    const [line, ...more] = await lineOf(id);
    expect(more).toHaveLength(0);
    expect(line).toMatchObject({ level, msg, res: { statusCode }, req: { path: path.split('?')[0] } });
    expect(JSON.stringify(line)).not.toContain('123456');
  });

  it('logs a request the client gave up on as aborted', async () => {
    await get('/hang', 'id-hang', 50);
    const [line] = await lineOf('id-hang');
    expect(line).toMatchObject({ level: 40, msg: 'request aborted', req: { path: '/hang' } });
  });

  it('writes no line for the probes, with or without a query', async () => {
    await get('/healthz', 'id-healthz');
    await get('/healthz?probe=1', 'id-healthz-query');
    await get('/ok', 'id-after-probe');
    await lineOf('id-after-probe');
    expect(await lineOf('id-healthz')).toHaveLength(0);
    expect(await lineOf('id-healthz-query')).toHaveLength(0);
  });
});
