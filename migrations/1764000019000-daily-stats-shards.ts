import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Guest creation counts its guest in `tenant_daily_stats` in its own statement, and a counter row
 * stays locked until that statement commits: with one row per tenant and day, every guest creation
 * of a tenant would wait for the previous one's commit. Each increment now goes to one of 16 rows
 * of the day (`shard`, drawn at random), and reads add them up, so concurrent creations rarely
 * meet on a row.
 */
export class DailyStatsShards1764000019000 implements MigrationInterface {
  name = 'DailyStatsShards1764000019000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE tenant_daily_stats ADD COLUMN shard smallint NOT NULL DEFAULT 0 CHECK (shard BETWEEN 0 AND 15)`,
    );
    await q.query(`ALTER TABLE tenant_daily_stats DROP CONSTRAINT tenant_daily_stats_pkey`);
    await q.query(`ALTER TABLE tenant_daily_stats ADD PRIMARY KEY (tenant_id, day, shard)`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Each day's shards added up into shard 0, then the column goes.
    await q.query(`
      WITH removed AS (DELETE FROM tenant_daily_stats RETURNING *)
      INSERT INTO tenant_daily_stats (tenant_id, day, shard, guests_created, upgrades, sign_ins)
      SELECT tenant_id, day, 0, sum(guests_created), sum(upgrades), sum(sign_ins) FROM removed GROUP BY tenant_id, day`);
    await q.query(`ALTER TABLE tenant_daily_stats DROP CONSTRAINT tenant_daily_stats_pkey`);
    await q.query(`ALTER TABLE tenant_daily_stats DROP COLUMN shard`);
    await q.query(`ALTER TABLE tenant_daily_stats ADD PRIMARY KEY (tenant_id, day)`);
  }
}
