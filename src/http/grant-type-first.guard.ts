import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../errors/app-error';

/**
 * Token endpoints authenticate the client (the global policy guard runs first), then look at
 * `grant_type` before the rest of the body (contract section 10): an unsupported grant answers
 * 400 `unsupported_grant_type` whatever other fields it carries, rather than the strict shape's
 * `invalid_request` for the fields that grant would have used (`username`, `password`, `scope`).
 * Route guards run after global guards and before pipes, which is exactly that order.
 */
@Injectable()
export class GrantTypeFirst implements CanActivate {
  constructor(private readonly supported: readonly string[]) {}

  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<Request>().body as Record<string, unknown> | undefined;
    const grantType = body?.['grant_type'];
    if (typeof grantType === 'string' && !this.supported.includes(grantType))
      throw new AppError('unsupported_grant_type');
    return true;
  }
}
