import { Controller, Inject, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Route } from '../http/route';
import { DeclaredRoutes } from './declared-routes';
import { openApiDocument } from './openapi-document';
import { OPENAPI_ROUTES } from './openapi.routes';

@Controller()
export class OpenApiController implements OnModuleInit {
  private document: Record<string, unknown> = {};

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly routes: DeclaredRoutes,
  ) {}

  /** Every module's controllers are known by now; the document is built once, at start-up. */
  onModuleInit(): void {
    this.document = openApiDocument(this.config, this.routes.list());
  }

  @Route(OPENAPI_ROUTES.document)
  openapi(): Record<string, unknown> {
    return this.document;
  }
}
