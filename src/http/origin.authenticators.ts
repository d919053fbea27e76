import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { AuthenticatorRegistry, type Authenticator } from './authenticator-registry';
import type { Policy } from './policy.decorator';
import type { Principal } from './principal';

/** Whole-origin string match: no parsing, no prefix or suffix tricks, `null` never passes. */
export function originMatches(req: Request, expected: string): boolean {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin === expected;
}

abstract class ExactOriginAuthenticator implements Authenticator, OnModuleInit {
  abstract readonly policy: Policy;
  protected abstract readonly expected: string;
  constructor(private readonly registry: AuthenticatorRegistry) {}
  onModuleInit(): void {
    this.registry.register(this);
  }
  authenticate(req: Request): Promise<Principal> {
    if (!originMatches(req, this.expected)) {
      return Promise.reject(new AppError('forbidden', 'The Origin header does not match this service.'));
    }
    return Promise.resolve({ kind: 'anonymous' });
  }
}

@Injectable()
export class AuthOriginAuthenticator extends ExactOriginAuthenticator {
  readonly policy = 'origin:auth' as const;
  protected readonly expected: string;
  constructor(registry: AuthenticatorRegistry, @Inject(APP_CONFIG) config: AppConfig) {
    super(registry);
    this.expected = config.authOrigin;
  }
}

@Injectable()
export class ConsoleOriginAuthenticator extends ExactOriginAuthenticator {
  readonly policy = 'origin:console' as const;
  protected readonly expected: string;
  constructor(registry: AuthenticatorRegistry, @Inject(APP_CONFIG) config: AppConfig) {
    super(registry);
    this.expected = config.consoleOrigin;
  }
}
