import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { AppConfig } from '../config/config';
import { DEFAULT_CACHE_POLICY } from './cache-policy';

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/**
 * The headers every answer starts with: helmet's security headers and `Cache-Control: no-store`
 * (a route serving public data overrides it with `@UseCachePolicy`). Mounted before routing, so
 * refusals of the edge (wrong host, bad body) carry them too.
 */
export function responseHeaders(config: AppConfig): (req: Request, res: Response, next: NextFunction) => void {
  const headers: HeaderList = [...securityHeaders(config), ['Cache-Control', DEFAULT_CACHE_POLICY]];
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

/**
 * helmet's headers for this configuration, computed once: none of them depends on the request (no
 * CSP nonces), and building the policy string on every request was measurable on cheap routes.
 */
export function securityHeaders(config: AppConfig): HeaderList {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let done = false;
  helmet(helmetOptions(config))({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    done = err === undefined;
  });
  if (!done || headers.length === 0) throw new Error('helmet did not answer synchronously');
  return headers;
}

/** The security headers' settings: a JSON API and two small pages that load only their own assets. */
export function helmetOptions(config: AppConfig): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        // The console's sign-in form POSTs to /api/auth/start, which redirects to the authorize
        // endpoint; browsers apply form-action to that redirect, so the auth origin is listed.
        formAction: ["'self'", config.authOrigin],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    strictTransportSecurity: config.authOrigin.startsWith('https:') ? { maxAge: 31_536_000 } : false,
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  };
}
