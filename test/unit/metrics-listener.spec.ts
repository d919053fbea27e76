import { createServer, type Server } from 'node:net';
import type { AppConfig } from '../../src/config/config';
import { MetricsService } from '../../src/platform/metrics/metrics.service';

/**
 * A metrics listener that cannot listen stops start-up with a message naming its variables; it
 * crashed the process with an unhandled 'error' event instead, its listen never settling.
 */
describe('metrics listener at start-up', () => {
  let taken: Server;
  let takenPort: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    takenPort = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => taken.close(resolve)));

  const metrics = (metricsHost: string, metricsPort: number) =>
    new MetricsService({ metricsHost, metricsPort } as AppConfig);

  it.each([
    ['a port in use', '127.0.0.1', () => takenPort, 'EADDRINUSE'],
    // TEST-NET-1 (RFC 5737): an address of no interface of this machine.
    ['an address not on this machine', '192.0.2.1', () => 0, 'EADDRNOTAVAIL'],
  ])('refuses %s, naming METRICS_HOST and METRICS_PORT', async (_case, host, port, code) => {
    await expect(metrics(host, port()).onApplicationBootstrap()).rejects.toThrow(
      `METRICS_HOST/METRICS_PORT: the metrics listener cannot listen there (${code})`,
    );
  });

  it('listens, and closes, where it can', async () => {
    const service = metrics('127.0.0.1', 0);
    await service.onApplicationBootstrap();
    expect((await fetch(`http://127.0.0.1:${service.port}/metrics`)).status).toBe(200);
    await service.onApplicationShutdown();
  });
});
