import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { ConfigError } from '../config/config';
import { ControlPlaneSeedService } from './control-plane-seed.service';

/**
 * What stops the service at start-up, before it accepts a connection, in this order (one hook, as
 * Nest runs a module's hooks in parallel):
 * - a migration of this release not yet applied: the service would report ready and answer 500 to
 *   every request that touches the new schema (a rolling release started before `migrate`);
 * - spec 1.6: a missing or conflicting control-plane seed.
 * Mounted by the service host only; the admin CLI, which migrates and seeds, does not run it.
 * It only reads: `migrate` alone changes the schema (TypeORM's showMigrations would create the
 * migrations table, racing a `migrate` that runs while instances start).
 */
@Injectable()
export class StartUpCheck implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly seed: ControlPlaneSeedService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if ((await new MigrationExecutor(this.db).getPendingMigrations()).length > 0) {
      throw new ConfigError([
        'DATABASE_URL: the database lacks migrations of this release (run: npm run admin -- migrate)',
      ]);
    }
    const problems = await this.seed.verify();
    if (problems.length > 0) {
      throw new ConfigError(problems.map((p) => `control-plane seed: ${p} (run: npm run admin -- seed-control-plane)`));
    }
  }
}
