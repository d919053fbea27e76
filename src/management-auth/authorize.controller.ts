import { Controller, Inject, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../errors/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { setHostCookie } from '../http/cookies';
import { Route } from '../http/route';
import { AuthorizeService, type AuthorizeQuery } from './authorize.service';
import { CONTROL_FLOW_COOKIE, CONTROL_FLOW_TTL_SECONDS } from './control-flows.store';
import { MANAGEMENT_AUTH_ROUTES } from './management-auth.routes';
import { errorPage, signInPage } from './sign-in-page';

const ASSETS = {
  'sign-in.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(__dirname, 'assets', 'sign-in.js')) },
  'sign-in.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(__dirname, 'assets', 'sign-in.css')) },
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(join(__dirname, 'assets', 'favicon.svg')) },
} as const;

@Controller()
export class AuthorizeController {
  constructor(
    private readonly authorizeService: AuthorizeService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(MANAGEMENT_AUTH_ROUTES.authorize)
  async authorize(@Query() query: AuthorizeQuery, @Res() res: Response): Promise<void> {
    const outcome = await this.authorizeService.authorize(query);
    switch (outcome.kind) {
      case 'reject':
        res.status(400).type('html').send(errorPage(outcome.message));
        return;
      case 'redirect':
        res.redirect(303, outcome.location);
        return;
      case 'form':
        // Lax: the form is reached by a top-level navigation from the console.
        setHostCookie(res, CONTROL_FLOW_COOKIE, outcome.cookie, CONTROL_FLOW_TTL_SECONDS, 'lax');
        res.status(200).type('html').send(signInPage(outcome.flowId, this.config.ttl.emailCode));
        return;
    }
  }

  @Route(MANAGEMENT_AUTH_ROUTES.asset)
  asset(@Param('name') name: string, @Res() res: Response): void {
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name as keyof typeof ASSETS] : undefined;
    if (!asset) throw new AppError('not_found');
    res.type(asset.type).send(asset.body);
  }
}
