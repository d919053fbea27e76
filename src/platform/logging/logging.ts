import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { AppConfig } from '../../config/config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed incoming X-Request-Id, else mints one; always set on the response. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * Structured JSON logs. Only the path is logged (never the query: it carries codes and state),
 * and no header values at all: Authorization, Cookie and Origin stay out of the logs.
 */
export function loggerParams(config: AppConfig, destination?: DestinationStream): Params {
  const options: Params['pinoHttp'] = {
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
  return { pinoHttp: destination ? [options, destination] : options };
}
