import { Controller, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AppError } from '../errors/app-error';
import { Route } from '../http/route';
import { CONSOLE_ROUTES } from './console-bff.routes';

const JS = 'text/javascript; charset=utf-8';

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  /** A strong validator of the body: the service keeps Express's ETags off, so assets carry their own. */
  readonly etag: string;
}

const asset = (type: string, body: Buffer): Asset => ({
  type,
  body,
  etag: `"${createHash('sha256').update(body).digest('base64url')}"`,
});

const own = (name: string, type: string): Asset => asset(type, readFileSync(join(__dirname, 'assets', name)));

/**
 * A file of an installed package, found through the package's own entry point so it is the version
 * package-lock.json pins. Both files are self-contained ES modules (no bare imports), which is what
 * lets the page load them without an import map, itself an inline script the CSP would refuse.
 */
const vendor = (pkg: string, file: string): Asset => asset(JS, readFileSync(join(dirname(require.resolve(pkg)), file)));

/** Read once at start-up; the page holds no data, so it is the same for everyone. */
const PAGE = own('index.html', 'text/html; charset=utf-8');

/**
 * The explicit allow-list of /assets/{name}: the page's own modules, stylesheet and icon, Preact
 * and htm. Nothing else under node_modules (or anywhere) can be reached through this route.
 */
const ASSETS: Readonly<Record<string, Asset>> = {
  'console.js': own('console.js', JS),
  'api.js': own('api.js', JS),
  'ui.js': own('ui.js', JS),
  'chart.js': own('chart.js', JS),
  'dashboard.js': own('dashboard.js', JS),
  'clients.js': own('clients.js', JS),
  'players.js': own('players.js', JS),
  'audit.js': own('audit.js', JS),
  'members.js': own('members.js', JS),
  'console.css': own('console.css', 'text/css; charset=utf-8'),
  'favicon.svg': own('favicon.svg', 'image/svg+xml'),
  'preact.mjs': vendor('preact', 'preact.mjs'),
  'htm.mjs': vendor('htm', 'htm.mjs'),
};

/**
 * The console page (issues 3 and 26): static files under the global strict CSP (no inline script
 * or style). Everything signed-in comes from /api/* by same-origin fetch, so no token ever reaches
 * the page: the browser only holds the HttpOnly session cookie. Assets are `no-cache` with a strong
 * ETag: the browser revalidates each load (a 304 without a body), so a deploy is seen at once
 * without versioned names.
 */
@Controller()
export class ConsolePageController {
  @Route(CONSOLE_ROUTES.page)
  page(@Res() res: Response): void {
    res.type(PAGE.type).send(PAGE.body);
  }

  @Route(CONSOLE_ROUTES.asset)
  asset(@Param('name') name: string, @Req() req: Request, @Res() res: Response): void {
    const found = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!found) throw new AppError('not_found');
    res.setHeader('ETag', found.etag);
    if (matches(req.headers['if-none-match'], found.etag)) {
      res.status(304).end();
      return;
    }
    res.type(found.type).send(found.body);
  }
}

/** RFC 9110 13.1.2: If-None-Match compares weakly, a list or `*`. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
