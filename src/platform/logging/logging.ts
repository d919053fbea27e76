import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { Store, storage } from 'nestjs-pino/storage';
import { destination as pinoDestination, pino, type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../../config/config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A fresh request id, for a request that brings no well-formed one. */
export function mintRequestId(): string {
  return randomUUID();
}

/** Echoes a well-formed incoming X-Request-Id, else mints one; always set on the response. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : mintRequestId();
  res.setHeader('X-Request-Id', id);
  return id;
}

type LoggedRequest = Request & { id: string };

/** nestjs-pino's per-request store, holding the request too so that log lines can name it. */
class RequestStore extends Store {
  constructor(
    logger: Logger,
    readonly req: LoggedRequest,
  ) {
    super(logger);
  }
}

/** What a log line says of a request: its id, method and path (never the query: it carries codes and state). */
function requestFields(req: LoggedRequest): { id: string; method: string; path: string } {
  return { id: req.id, method: req.method, path: loggedPath(req.originalUrl.split('?')[0] ?? '') };
}

const holdsAt = (text: string): boolean => text.includes('@') || text.includes('%40');

/**
 * The path as logs may hold it: a segment can be an email address (DELETE
 * /t/{tenant}/me/identities/email/{address}), and no log holds one, so a segment with an @, plain
 * or escaped, becomes `<address>`. Every request's line passes here: most paths have neither, and
 * cost two scans.
 */
export function loggedPath(path: string): string {
  if (!holdsAt(path)) return path;
  return path
    .split('/')
    .map((segment) => (holdsAt(segment) ? '<address>' : segment))
    .join('/');
}

export interface HttpLogging {
  /** Mounted first of all middleware, so every request gets its id and is logged once. */
  readonly middleware: (req: Request, res: Response, next: NextFunction) => void;
  /**
   * nestjs-pino on the same logger, for the services' logs. Its own middleware is not mounted
   * (`forRoutes: []`): ours binds its store, and Nest's middleware layer around nestjs-pino's cost
   * about as much CPU as the static route's handler (docs/performance.md).
   */
  readonly params: Params;
  /** The root logger of the services' lines (redacted); nestjs-pino hands it out through `params`. */
  readonly logger: Logger;
}

/**
 * `/readyz` reads PostgreSQL and Redis for anyone who asks, before any budget (issue 22, point 6),
 * so it is logged like every other request (contract section 10), but a 2xx at debug: the load
 * balancer's probe every few seconds would drown the log at info. A 503 is an error line as usual,
 * and LOG_LEVEL=debug shows who is probing. `/healthz` does no I/O and stays unlogged.
 */
const PROBES_LOGGED_AT_DEBUG: ReadonlySet<string> = new Set(['/readyz']);

/**
 * Structured JSON logs, and no header values at all: Authorization, Cookie and Origin stay out.
 *
 * The request's fields reach the services' log lines through the `mixin`, read from nestjs-pino's
 * async context only when a line is written. A child logger per request (what pino-http makes,
 * serialising and redacting the request up front) cost more CPU than the static route's own work
 * (docs/performance.md), and most requests write no line but their own.
 *
 * Requests to `unloggedPaths` (the probes) get an id but no line, except `/readyz`: see
 * PROBES_LOGGED_AT_DEBUG. The request logger runs before
 * host routing and the body rules, so a request they refuse (the wrong host's 404, a content
 * type's 400, a 413) still carries X-Request-Id and is logged once,
 * like every other request (contract section 10).
 */
export function httpLogging(
  config: AppConfig,
  opts: { readonly unloggedPaths: ReadonlySet<string>; readonly destination?: DestinationStream },
): HttpLogging {
  const { unloggedPaths, destination } = opts;
  const options = {
    level: config.logLevel,
    base: { pid: process.pid, hostname: hostname(), service: 'svc-auth' },
    mixin: () => {
      const store = storage.getStore();
      return store instanceof RequestStore ? { req: requestFields(store.req) } : {};
    },
    redact: {
      paths: ['req.headers', 'res.headers', '*.authorization', '*.cookie', '*.email', '*.code', '*.token'],
      remove: true,
    },
  };
  // Synchronous writes to stdout: pino's default hands each line to the thread pool (an async
  // fs.write and its callback), which cost guest creation about 20 µs a request against 1 for a
  // plain write (docs/performance.md). A line is then written, in order, before the answer goes
  // out, and none is lost when the process dies.
  const logger = pino(options, destination ?? pinoDestination({ dest: 1, sync: true }));
  // The access line holds only the fields logAnswer writes (id, method, path without its query,
  // status, time), so it skips redaction: pino's wildcard paths cost more than the rest of the line
  // (4.6 against 2.2 µs a line), and every request in production writes one.
  const accessLog = logger.child({}, { redact: [] });

  const middleware = (request: Request, res: Response, next: NextFunction): void => {
    const req = request as LoggedRequest;
    req.id = requestId(req, res);
    // The path without its query, as host routing matches it.
    const probe = unloggedPaths.has(req.path);
    if (!probe || PROBES_LOGGED_AT_DEBUG.has(req.path)) {
      const started = Date.now();
      res.once('close', () => logAnswer(accessLog, req, res, Date.now() - started, probe ? 'debug' : 'info'));
    }
    storage.run(new RequestStore(logger, req), next);
  };
  return { middleware, logger, params: { pinoHttp: { logger }, useExisting: true, forRoutes: [] } };
}

/** One line per answered request; answers of 500 and above, and aborted requests, as errors. */
function logAnswer(
  logger: Logger,
  req: LoggedRequest,
  res: Response,
  responseTime: number,
  successLevel: 'info' | 'debug',
): void {
  const line = { req: requestFields(req), res: { statusCode: res.statusCode }, responseTime };
  if (!res.writableFinished) logger.warn(line, 'request aborted');
  else if (res.statusCode >= 500) logger.error(line, 'request failed');
  else logger[successLevel](line, 'request completed');
}
