import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../errors/app-error';

/**
 * A write whose route declares no request body (a revocation, a deactivation, a removal named by
 * its path) takes none: bodies are exact (contract 15), so every field of one is unknown, and a
 * caller who sent `{"all_sessions": true}` must not believe it took effect. An empty body, or an
 * empty object, is none.
 */
@Injectable()
export class NoBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const body: unknown = context.switchToHttp().getRequest<Request>().body;
    if (body === undefined || body === null) return true;
    if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return true;
    throw new AppError('invalid_request', 'This request takes no body.');
  }
}
