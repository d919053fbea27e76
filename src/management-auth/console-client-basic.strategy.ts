import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import type { StrategyCreated } from 'passport';
import { BasicStrategy } from 'passport-http';
import { ConsoleClientVerifier, type ConsoleClient } from './console-client.verifier';

export const CONSOLE_BASIC_STRATEGY = 'console-client-basic';

/**
 * passport-http's Basic strategy for the console client, reading the header through
 * ConsoleClientVerifier only. passport-http's own `authenticate` would parse the header first, loosely
 * (it splits at every `:`, so a secret holding one is cut short, and decodes through Node's deprecated
 * `Buffer()`, which walks the stack on each call: docs/performance.md), so this strategy hands the
 * whole header to the verifier instead and reports its outcome to passport.
 */
@Injectable()
export class ConsoleClientBasicStrategy extends PassportStrategy(BasicStrategy, CONSOLE_BASIC_STRATEGY) {
  constructor(private readonly verifier: ConsoleClientVerifier) {
    super({ passReqToCallback: true, realm: 'svc-auth' });
  }

  validate(req: Request): Promise<ConsoleClient | null> {
    return this.verifier.verify(req.headers.authorization);
  }

  /** Passport runs a copy of the strategy that carries `success`, `fail` and `error` for this request. */
  override authenticate(this: StrategyCreated<ConsoleClientBasicStrategy>, req: Request): void {
    this.validate(req).then(
      (client) => (client ? this.success(client) : this.fail('Basic realm="svc-auth"', 401)),
      (err: unknown) => this.error(err instanceof Error ? err : new Error('basic authentication failed')),
    );
  }
}
