import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DeclaredRoutes } from './declared-routes';
import { OpenApiController } from './openapi.controller';

/** Serves the OpenAPI document, assembled from the route declarations of every module. */
@Module({
  imports: [DiscoveryModule],
  controllers: [OpenApiController],
  providers: [DeclaredRoutes],
})
export class OpenApiModule {}
