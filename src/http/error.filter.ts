import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, DependencyUnavailableError, ErrorCode, errorBody } from '../errors/app-error';
import { MetricsService } from '../platform/metrics/metrics.service';
import { dependencyOf } from '../errors/dependency-failure';

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/**
 * The one place errors become HTTP: the contract's body `{error, error_description}`.
 * Internal causes are logged with the request id and never returned.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  constructor(private readonly metrics: MetricsService) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    const error = this.toAppError(exception, req);
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(error.headers)) res.setHeader(k, v);
    res.setHeader('Cache-Control', 'no-store');
    res.status(error.status).json(errorBody(error.code, error.description));
  }

  private toAppError(exception: unknown, req: Request): AppError {
    if (exception instanceof DependencyUnavailableError) {
      this.logger.warn(
        { dependency: exception.dependency, err: describe(exception.causeError), path: req.path },
        'dependency unavailable',
      );
      this.metrics.dependencyErrors.inc({ dependency: exception.dependency });
      return exception;
    }
    if (exception instanceof AppError) return exception;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = HTTP_STATUS_CODES[status];
      if (code) return new AppError(code, status === 400 ? validationMessage(exception) : undefined);
    }
    const bodyParserType = (exception as { type?: unknown })?.type;
    if (bodyParserType === 'entity.too.large') return new AppError('payload_too_large');
    if (
      bodyParserType === 'entity.parse.failed' ||
      bodyParserType === 'encoding.unsupported' ||
      bodyParserType === 'charset.unsupported'
    ) {
      return new AppError('invalid_request', 'The request body is not valid.');
    }
    const dependency = dependencyOf(exception);
    if (dependency) {
      this.logger.warn({ dependency, err: describe(exception), path: req.path }, 'dependency unavailable');
      this.metrics.dependencyErrors.inc({ dependency });
      return new AppError('temporarily_unavailable');
    }
    this.logger.error(
      {
        err:
          exception instanceof Error
            ? { name: exception.name, message: exception.message, stack: exception.stack }
            : String(exception),
        path: req.path,
      },
      'unhandled error',
    );
    return new AppError('server_error');
  }
}

function describe(err: unknown): string | undefined {
  return err instanceof Error ? `${err.name}: ${err.message}` : undefined;
}

function validationMessage(exception: HttpException): string | undefined {
  const body = exception.getResponse();
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const m = body.message;
    if (Array.isArray(m)) return m.map(String).slice(0, 5).join('; ');
    if (typeof m === 'string') return m;
  }
  return undefined;
}
