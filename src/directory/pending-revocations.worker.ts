import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { dependencyOf } from '../errors/dependency-failure';
import { MetricsService } from '../platform/metrics/metrics.service';
import { SessionStore } from '../platform/session-store/session-store';
import { PendingRevocationsRepository } from './pending-revocations.repository';
import { UserDeactivation } from './user-deactivation';

/** Notes claimed per transaction: the claim holds their rows while Redis is asked, one by one. */
const BATCH = 20;

/**
 * Carries out the revocations deactivations and session revocations left pending (Redis failed
 * after PostgreSQL committed), every PENDING_REVOCATION_INTERVAL_MS: the management bearer and
 * refresh read only Redis, so without this a deactivated developer's session, or a revoked one,
 * would live on until someone repeated the command.
 * Every replica runs it; SKIP LOCKED gives each note to one of them at a time, and the revocation
 * is idempotent, so a note carried out twice (by a replica and the deactivation itself) is harmless.
 * A round never throws: PostgreSQL or Redis being down leaves the notes and one warning line, and
 * the next round tries again.
 */
@Injectable()
export class PendingRevocationsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('PendingRevocations');
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly notes: PendingRevocationsRepository,
    private readonly deactivation: UserDeactivation,
    private readonly sessions: SessionStore,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  /** Stops the timer and waits for a round under way, so shutdown never cuts a claim in half. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
  }

  /** One round after the interval, the next after it ends: rounds never overlap. */
  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.round = this.runRound().finally(() => {
        this.round = null;
        this.schedule();
      });
    }, this.config.pendingRevocationIntervalMs);
    // A pending round must not keep a stopping process alive.
    this.timer.unref();
  }

  /** Retries notes until none is left or one fails, then publishes the backlog; never throws. */
  async runRound(): Promise<void> {
    try {
      for (;;) {
        const round = await this.notes.retry(BATCH, async ({ userId, sessionId }) => {
          // With a tombstone, as the CLI's: harmless for a session that was created, and it refuses a
          // create racing the revocation.
          if (sessionId !== null) await this.sessions.revoke(sessionId, { tombstone: true });
          else await this.deactivation.revokeSessions(userId);
        });
        if (round.failure !== null) {
          this.warn(round.failure);
          break;
        }
        if (!round.full || this.stopped) break;
      }
      this.metrics.pendingRevocations.set(await this.notes.backlog());
    } catch (err) {
      this.warn(err);
    }
  }

  /** Ids and the failure's kind only: no token or address is ever part of either. */
  private warn(err: unknown): void {
    this.logger.warn(
      {
        dependency: dependencyOf(err) ?? 'unknown',
        err: err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : typeof err,
      },
      'pending revocations kept for the next round',
    );
  }
}
