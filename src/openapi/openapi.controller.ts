import { Controller, Get, Inject } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { UseCachePolicy } from '../http/cache-policy';
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
  @UseCachePolicy('public, max-age=300')
  openapi(): Record<string, unknown> {
    return this.document;
  }
}
