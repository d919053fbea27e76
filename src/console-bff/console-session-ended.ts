import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { AppError } from '../errors/app-error';
import { expireHostCookie } from '../http/cookies';
import { sendError } from '../http/error.filter';
import { CONSOLE_COOKIE } from './console-cookies';

/**
 * 401 for a console session that is missing, unknown, tampered with, expired or dropped. It says
 * only that the session ended; the console's edge (ConsoleSessionEndedFilter) turns that into
 * the expired cookie, so the browser stops presenting a session the server no longer has.
 */
export class ConsoleSessionEndedError extends AppError {
  /** False when the request carried no console cookie: there is nothing to expire. */
  constructor(readonly expireCookie = true) {
    super('unauthorized', 'No console session. Sign in again.');
    this.name = 'ConsoleSessionEndedError';
  }
}

/** The console routes' edge for an ended session: the error answer plus the expired cookie. */
@Catch(ConsoleSessionEndedError)
export class ConsoleSessionEndedFilter implements ExceptionFilter<ConsoleSessionEndedError> {
  catch(error: ConsoleSessionEndedError, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (error.expireCookie && !res.headersSent) expireHostCookie(res, CONSOLE_COOKIE, 'strict');
    sendError(res, error);
  }
}
