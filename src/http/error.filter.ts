import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  AppError,
  DependencyUnavailableError,
  errorBody,
  type AuthChallenge,
  type ErrorCode,
} from '../errors/app-error';
import { loggedPath } from '../platform/logging/logging';
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
    sendError(res, this.toAppError(exception, req));
  }

  private toAppError(exception: unknown, req: Request): AppError {
    if (exception instanceof DependencyUnavailableError) {
      this.logger.warn(
        { dependency: exception.dependency, err: describe(exception.causeError), path: loggedPath(req.path) },
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
    const dependency = dependencyOf(exception);
    if (dependency) {
      this.logger.warn({ dependency, err: describe(exception), path: loggedPath(req.path) }, 'dependency unavailable');
      this.metrics.dependencyErrors.inc({ dependency });
      return new AppError('temporarily_unavailable');
    }
    this.logger.error(
      {
        err:
          exception instanceof Error
            ? {
                name: exception.name,
                message: withoutAddresses(exception.message),
                stack: withoutAddresses(exception.stack),
              }
            : withoutAddresses(String(exception)),
        path: loggedPath(req.path),
      },
      'unhandled error',
    );
    return new AppError('server_error');
  }
}

/** RFC 6750 §3 and RFC 7617 §2: what a 401 asks the caller to present. */
const CHALLENGES: Record<AuthChallenge, string> = {
  bearer: 'Bearer error="invalid_token"',
  basic: 'Basic realm="svc-auth", charset="UTF-8"',
};

/**
 * Writes an AppError as the contract's error answer, its details as headers. Exported for the
 * feature filters that add their own edge effects (the console BFF expires its cookie) first.
 */
export function sendError(res: Response, error: AppError): void {
  if (res.headersSent) return;
  if (error.challenge) res.setHeader('WWW-Authenticate', CHALLENGES[error.challenge]);
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  if (error.allow) res.setHeader('Allow', error.allow.join(', '));
  res.setHeader('Cache-Control', 'no-store');
  res.status(error.status).json(errorBody(error.code, error.description));
}

/** An error for the log, with anything shaped like an email address cut out (logs hold none). */
function describe(err: unknown): string | undefined {
  return err instanceof Error ? withoutAddresses(`${err.name}: ${err.message}`) : undefined;
}

/** Text for the log with anything shaped like an email address cut out: an error may quote its input. */
export function withoutAddresses<T extends string | undefined>(text: T): T {
  return text?.replace(/[^\s<>"'(),;:]+@[^\s<>"'(),;:]+/g, '<address>') as T;
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
