import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createApp } from '../../src/app.setup';
import { loadConfig } from '../../src/config/config';
import { freePort, type TestApp } from './test-app';

export interface SecondInstance {
  readonly app: NestExpressApplication;
  /** A request to this instance, addressed to the console host as a load balancer would. */
  get(path: string): request.Test;
  close(): Promise<void>;
}

/**
 * A second service instance with the first one's environment: the same database, the same
 * Redis and key prefix, the same origins. Only the listening port differs, so requests set the
 * Host header to the console host explicitly.
 */
export async function startSecondInstance(t: TestApp): Promise<SecondInstance> {
  const port = await freePort();
  const app = await createApp(loadConfig({ ...t.env, PORT: String(port) }));
  await app.listen(port);
  const host = new URL(t.consoleOrigin).host;
  return {
    app,
    get: (path) => request(`http://127.0.0.1:${port}`).get(path).set('Host', host),
    close: () => app.close(),
  };
}
