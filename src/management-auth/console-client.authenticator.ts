import { Injectable, OnModuleInit } from '@nestjs/common';
import type { Request, Response } from 'express';
import passport from 'passport';
import { AppError } from '../errors/app-error';
import { AuthenticatorRegistry, type Authenticator } from '../http/authenticator-registry';
import type { Principal } from '../http/principal';
import { CONSOLE_BASIC_STRATEGY, type ConsoleClient } from './console-client-basic.strategy';

export function invalidClient(): AppError {
  return new AppError('invalid_client', undefined, { 'WWW-Authenticate': 'Basic realm="svc-auth", charset="UTF-8"' });
}

/** Runs the passport Basic strategy for the `basic:console-client` policy. */
@Injectable()
export class ConsoleClientAuthenticator implements Authenticator, OnModuleInit {
  readonly policy = 'basic:console-client' as const;

  constructor(private readonly registry: AuthenticatorRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  authenticate(req: Request): Promise<Principal> {
    return new Promise((resolve, reject) => {
      const handler = passport.authenticate(
        CONSOLE_BASIC_STRATEGY,
        { session: false },
        (err: unknown, client: ConsoleClient | false) => {
          if (err) return reject(err instanceof Error ? err : new Error('basic authentication failed'));
          if (!client) return reject(invalidClient());
          resolve({ kind: 'console-client', clientId: client.clientId });
        },
      ) as (req: Request, res: Response, next: (err?: unknown) => void) => void;
      handler(req, {} as Response, (err?: unknown) => reject(err instanceof Error ? err : invalidClient()));
    });
  }
}
