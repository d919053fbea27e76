import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../errors/app-error';

/**
 * Express answers HEAD with the GET route. On a GET that spends or writes a one-time record (a
 * bounce, a callback, a flow's start) that would let a link checker, a mail scanner or a browser's
 * preview spend the player's link before the player follows it, so HEAD is refused before
 * anything is read, counted or spent.
 */
@Injectable()
export class NoHeadGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<Request>().method !== 'HEAD') return true;
    throw new AppError('method_not_allowed', 'This link works once: follow it with GET.', { allow: ['GET'] });
  }
}
