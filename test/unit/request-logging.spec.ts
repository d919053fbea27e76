import { eventually } from '../support/eventually';
import { startLoggedApp, type LoggedApp } from '../support/logged-app';

/** One line per request, at a level that says how it ended. */
describe('request logging', () => {
  let app: LoggedApp;
  beforeAll(async () => {
    app = await startLoggedApp('info', new Set(['/healthz']), (a, logger) => {
      a.get('/ok', (_req, res) => void res.json({}));
      a.get('/says-secrets', (_req, res) => {
        logger.info({ player: { email: 'zoe@play.example', token: 'tok-secret', code: '654321' } }, 'service line');
        res.json({});
      });
      a.get('/boom', (_req, res) => void res.status(500).json({}));
      a.get('/hang', () => undefined);
      a.get('/healthz', (_req, res) => void res.json({}));
    });
  });
  afterAll(() => app.close());

  const get = (path: string, id: string, abortAfterMs?: number) => app.get(path, id, abortAfterMs);
  const lineOf = (id: string) => app.linesOf(id);

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

  it("redacts the services' lines, while the access line, which skips redaction, holds its fields", async () => {
    await get('/says-secrets', 'id-secrets');
    // The service line is written first; the access line when the answer closes.
    await eventually(async () => (await lineOf('id-secrets')).length === 2, 1_000);
    const lines = await lineOf('id-secrets');
    const service = lines.find((l) => l.msg === 'service line');
    const access = lines.find((l) => l.msg === 'request completed');
    expect(service).toMatchObject({ player: {}, req: { id: 'id-secrets', path: '/says-secrets' } });
    expect(JSON.stringify(service)).not.toMatch(/zoe@play|tok-secret|654321/);
    expect(access).toMatchObject({
      req: { id: 'id-secrets', method: 'GET', path: '/says-secrets' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
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
