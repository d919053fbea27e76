import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startTestApp, type TestApp } from '../../support/test-app';

const PROBE = join(__dirname, '../../../dist/src/health/container-probe.js');

/** The built probe the image's HEALTHCHECK runs, against a real service and a closed port. */
describe("the container's health check", () => {
  let t: TestApp;

  beforeAll(async () => {
    if (!existsSync(PROBE)) throw new Error('build first: npm run build (npm test does)');
    t = await startTestApp();
  });
  afterAll(() => t.close());

  // Asynchronous: the service under test answers from this process's event loop.
  const probe = (env: Record<string, string>) =>
    new Promise<number | null>((resolve) =>
      spawn(process.execPath, [PROBE], { env: { ...process.env, ...env }, stdio: 'ignore' }).once('exit', resolve),
    );

  it('exits 0 when the service at HOST and PORT is ready, and 1 where nothing listens', async () => {
    const port = new URL(t.authOrigin).port;
    expect(await probe({ HOST: '127.0.0.1', PORT: port })).toBe(0);
    expect(await probe({ HOST: '0.0.0.0', PORT: port })).toBe(0);
    expect(await probe({ HOST: '127.0.0.1', PORT: String(await freePort()) })).toBe(1);
  });
});
