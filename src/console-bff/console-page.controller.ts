import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../errors/app-error';
import { UseCachePolicy } from '../http/cache-policy';
import { UsePolicy } from '../http/policy.decorator';

const asset = (name: string, type: string) => ({ type, body: readFileSync(join(__dirname, 'assets', name)) });

/** Read once at start-up; the page holds no data, so it is the same for everyone. */
const PAGE = asset('index.html', 'text/html; charset=utf-8');
const ASSETS = {
  'console.js': asset('console.js', 'text/javascript; charset=utf-8'),
  'console.css': asset('console.css', 'text/css; charset=utf-8'),
} as const;

/**
 * The console page (issue 3): static files under the global strict CSP (no inline script or
 * style). Everything signed-in comes from /api/* by same-origin fetch, so no token ever reaches
 * the page: the browser only holds the HttpOnly session cookie.
 */
@Controller()
@UsePolicy('public')
export class ConsolePageController {
  @Get()
  page(@Res() res: Response): void {
    res.type(PAGE.type).send(PAGE.body);
  }

  @Get('assets/:name')
  @UseCachePolicy('no-cache')
  asset(@Param('name') name: string, @Res() res: Response): void {
    const found = Object.hasOwn(ASSETS, name) ? ASSETS[name as keyof typeof ASSETS] : undefined;
    if (!found) throw new AppError('not_found');
    res.type(found.type).send(found.body);
  }
}
