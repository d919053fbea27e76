import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { UsePolicy } from '../http/policy.decorator';
import { openApiDocument } from './openapi-document';

@Controller()
@UsePolicy('public')
export class OpenApiController {
  private readonly document: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.document = openApiDocument(config);
  }

  @Get('openapi.json')
  openapi(@Res({ passthrough: true }) res: Response): Record<string, unknown> {
    res.setHeader('Cache-Control', 'public, max-age=300');
    return this.document;
  }
}
