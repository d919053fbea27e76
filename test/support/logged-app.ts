import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { AppConfig } from '../../src/config/config';
import { httpLogging } from '../../src/platform/logging/logging';

export type LogLine = Record<string, unknown>;

export interface LoggedApp {
  /** GET `path` with this request id; `abortAfterMs` gives up on the answer, as a client may. */
  get(path: string, id: string, abortAfterMs?: number): Promise<void>;
  /** The lines of the request with this id, once it has written any (or after 0.5 s). */
  linesOf(id: string): Promise<LogLine[]>;
  close(): Promise<void>;
}

/** A bare Express app behind the service's request logging, its lines collected as JSON. */
export async function startLoggedApp(
  logLevel: string,
  unloggedPaths: ReadonlySet<string>,
  routes: (app: Express, logger: Logger) => void,
): Promise<LoggedApp> {
  const lines: LogLine[] = [];
  const logging = httpLogging({ logLevel } as AppConfig, {
    unloggedPaths,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  const app = express();
  app.use(logging.middleware);
  routes(app, logging.logger);
  const server: Server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const ofRequest = (id: string) => lines.filter((l) => (l.req as { id?: string } | undefined)?.id === id);
  return {
    get: (path, id, abortAfterMs) =>
      new Promise<void>((resolve) => {
        const req = httpRequest({ port, path, headers: { 'x-request-id': id } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', () => resolve());
        if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
        req.end();
      }),
    async linesOf(id) {
      for (let i = 0; i < 50 && ofRequest(id).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      return ofRequest(id);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
