import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { count, rowsOf, text } from '../platform/database/row-decoders';

/** What a tenant's day counts (contract 15's chart). */
export type DailyCounter = 'guests_created' | 'upgrades' | 'sign_ins';

export interface DayStats {
  /** The UTC day, `YYYY-MM-DD`. */
  readonly date: string;
  readonly guests_created: number;
  readonly upgrades: number;
  readonly sign_ins: number;
}

/**
 * Adds one to a counter of the tenant's current UTC day, on one of the day's 16 rows drawn at
 * random (migration 1764000019000): concurrent increments rarely wait for each other's commit.
 * `tenant` is the statement's expression for the tenant id, `from` an optional FROM clause: guest
 * creation counts its guest inside its own statement (GuestAccountsRepository, `FROM` the inserted
 * user); upgrades and sign-ins call `count` inside their own transaction, as its last statement, so
 * a row is locked only until the commit.
 */
export function countTodaySql(counter: DailyCounter, tenant: string, from = ''): string {
  return `INSERT INTO tenant_daily_stats (tenant_id, day, shard, ${counter})
    SELECT ${tenant}, (clock_timestamp() AT TIME ZONE 'UTC')::date, floor(random() * 16)::smallint, 1 ${from}
    ON CONFLICT (tenant_id, day, shard) DO UPDATE SET ${counter} = tenant_daily_stats.${counter} + 1`;
}

/** A tenant's daily counts (table `tenant_daily_stats`, contract 15). */
@Injectable()
export class DailyStatsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async count(m: EntityManager, tenantId: string, counter: Exclude<DailyCounter, 'guests_created'>): Promise<void> {
    await m.query(countTodaySql(counter, '$1'), [tenantId]);
  }

  /** The last `days` UTC days up to today, oldest first, days without activity as zeros; shards added up. */
  async lastDays(tenantId: string, days: number): Promise<DayStats[]> {
    const rows = rowsOf(
      await this.db.query(
        `WITH today AS (SELECT (clock_timestamp() AT TIME ZONE 'UTC')::date AS d)
       SELECT to_char(g.day, 'YYYY-MM-DD') AS date,
              coalesce(sum(s.guests_created), 0) AS guests_created,
              coalesce(sum(s.upgrades), 0) AS upgrades,
              coalesce(sum(s.sign_ins), 0) AS sign_ins
         FROM today, generate_series(today.d - ($2::int - 1), today.d, interval '1 day') AS g(day)
         LEFT JOIN tenant_daily_stats s ON s.tenant_id = $1 AND s.day = g.day::date
        GROUP BY g.day ORDER BY g.day`,
        [tenantId, days],
      ),
    );
    return rows.map((r) => ({
      date: text(r, 'date'),
      guests_created: count(r, 'guests_created'),
      upgrades: count(r, 'upgrades'),
      sign_ins: count(r, 'sign_ins'),
    }));
  }
}
