import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { AppConfig } from './config/config';
import { AppError } from './errors/app-error';
import { TenantWebOrigins } from './guest/tenant-web-origins';
import { tenantCors } from './guest/tenant-cors';
import { bodyRules } from './http/body-rules';
import { Drain } from './http/drain';
import { hostRouting, PROBE_PATHS } from './http/host-routing';
import { inSequence } from './http/in-sequence';
import { answerParserRefusals } from './http/parser-refusals';
import { responseHeaders, securityHeaders } from './http/response-headers';
import { MetricsService } from './platform/metrics/metrics.service';
import { httpLogging, type HttpLogging } from './platform/logging/logging';
import { requestMetrics } from './platform/metrics/request-metrics';

/**
 * Builds the configured application; `main.ts` and every e2e test call this, so tests exercise
 * exactly the production pipeline: headers, host routing, body rules, validation, errors.
 */
export async function createApp(
  config: AppConfig,
  opts: { logDestination?: DestinationStream } = {},
): Promise<NestExpressApplication> {
  const logging = httpLogging(config, {
    unloggedPaths: PROBE_PATHS,
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  // A module that fails to start (PostgreSQL unreachable) is thrown to the caller, whose one line
  // (main.ts) says what to fix. Nest's default printed its own coloured, multi-line dump of the
  // error and of the buffered start-up lines, then exited before that line was written.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logging.params), {
    bodyParser: false,
    bufferLogs: true,
    abortOnError: false,
    autoFlushLogs: false,
  });
  app.useLogger(app.get(Logger));
  app.flushLogs();
  configureApp(app, config, logging.middleware);
  return app;
}

function configureApp(app: NestExpressApplication, config: AppConfig, requestLogging: HttpLogging['middleware']): void {
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', false);
  app.use(
    inSequence([
      requestLogging,
      responseHeaders(config),
      requestMetrics(app.get(MetricsService)),
      hostRouting(config),
      bodyRules(),
      // After the body parsers: a refused cross-origin request is judged by the client_id it names.
      tenantCors(app.get(TenantWebOrigins)),
    ]),
  );
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) =>
        new AppError(
          'invalid_request',
          errors
            .flatMap((e) => Object.values(e.constraints ?? {}))
            .slice(0, 5)
            .join('; ') || 'The request is malformed.',
        ),
    }),
  );
  app.get(Drain).attach(app.getHttpServer());
  answerParserRefusals(app.getHttpServer(), securityHeaders(config));
  app.enableShutdownHooks();
}
