import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { AuthenticatorFor, type Authenticator } from './authenticator-registry';
import type { Principal } from './principal';

/** Whole-origin string match: no parsing, no prefix or suffix tricks, `null` never passes. */
export function originMatches(req: Request, expected: string): boolean {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin === expected;
}

abstract class ExactOriginAuthenticator implements Authenticator {
  protected abstract readonly expected: string;
  authenticate(req: Request): Promise<Principal> {
    if (!originMatches(req, this.expected)) {
      return Promise.reject(new AppError('forbidden', 'The Origin header does not match this service.'));
    }
    return Promise.resolve({ kind: 'anonymous' });
  }
}

@Injectable()
@AuthenticatorFor('origin:auth')
export class AuthOriginAuthenticator extends ExactOriginAuthenticator {
  protected readonly expected: string;
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super();
    this.expected = config.authOrigin;
  }
}

@Injectable()
@AuthenticatorFor('origin:console')
export class ConsoleOriginAuthenticator extends ExactOriginAuthenticator {
  protected readonly expected: string;
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super();
    this.expected = config.consoleOrigin;
  }
}
