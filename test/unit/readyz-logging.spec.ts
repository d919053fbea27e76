import { PROBE_PATHS } from '../../src/http/host-routing';
import { startLoggedApp, type LoggedApp } from '../support/logged-app';

/**
 * Issue 22, point 6: `/readyz` reads PostgreSQL and Redis unauthenticated, so it is logged (a 2xx at
 * debug, a 503 as an error); `/healthz` does no I/O and stays quiet.
 */
describe('request logging of the probes', () => {
  let app: LoggedApp;
  let ready = true;
  beforeAll(async () => {
    app = await startLoggedApp('debug', PROBE_PATHS, (a) => {
      a.get('/readyz', (_req, res) => void res.status(ready ? 200 : 503).json({}));
      a.get('/healthz', (_req, res) => void res.json({}));
    });
  });
  afterAll(() => app.close());

  const get = (path: string, id: string) => app.get(path, id);
  const linesOf = (id: string) => app.linesOf(id);

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
