import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { pinoHttp, type HttpLogger, type Options } from 'pino-http';
import type { AppConfig } from '../../config/config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed incoming X-Request-Id, else mints one; always set on the response. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

export interface HttpLogging {
  /** Mounted first of all middleware, so every request is logged once and gets its id. */
  readonly middleware: HttpLogger;
  /** nestjs-pino on the same logger, binding each request's logger for the services' logs. */
  readonly params: Params;
}

/**
 * Structured JSON logs. Only the path is logged (never the query: it carries codes and state),
 * and no header values at all: Authorization, Cookie and Origin stay out of the logs.
 *
 * The request logger runs before host routing and the body rules, so a request they refuse (the
 * wrong host's 404, a content type's 400, a 413) still carries X-Request-Id and is logged once,
 * like every other request (contract section 10).
 */
export function httpLogging(config: AppConfig, destination?: DestinationStream): HttpLogging {
  const options: Options = {
    level: config.logLevel,
    genReqId: (req, res) => requestId(req, res),
    // On the root logger, not pino-http's customProps, which would add a child logger per request.
    base: { pid: process.pid, hostname: hostname(), service: 'svc-auth' },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    redact: {
      paths: ['req.headers', 'res.headers', '*.authorization', '*.cookie', '*.email', '*.code', '*.token'],
      remove: true,
    },
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
  };
  const middleware = destination ? pinoHttp(options, destination) : pinoHttp(options);
  return { middleware, params: { pinoHttp: { logger: middleware.logger }, useExisting: true } };
}
