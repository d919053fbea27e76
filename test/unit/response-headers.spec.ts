import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import type { AppConfig } from '../../src/config/config';
import { helmetOptions, responseHeaders } from '../../src/http/response-headers';

/** The headers computed once at start-up are exactly the ones helmet sets on a live response. */
describe('response headers', () => {
  const answer = (mount: (app: express.Express) => void) => {
    const app = express();
    app.disable('x-powered-by');
    mount(app);
    app.get('/', (_req, res) => res.json({}));
    return request(app).get('/');
  };
  const securityOnly = (headers: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(headers).filter(([n]) => !['date', 'connection', 'keep-alive', 'cache-control'].includes(n)),
    );

  it.each(['https://auth.example', 'http://localhost:3000'])('match helmet for %s', async (authOrigin) => {
    const config = { authOrigin } as AppConfig;
    const live = await answer((app) => app.use(helmet(helmetOptions(config))));
    const computed = await answer((app) => app.use(responseHeaders(config)));
    expect(Object.keys(securityOnly(live.headers)).length).toBeGreaterThan(8);
    expect(securityOnly(computed.headers)).toEqual(securityOnly(live.headers));
    expect(computed.headers['strict-transport-security'] !== undefined).toBe(authOrigin.startsWith('https:'));
    expect(computed.headers['cache-control']).toBe('no-store');
  });
});
