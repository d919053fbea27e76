import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console manages tenants (contract 15): management tokens carry `tenant:write` beside
 * `tenant:read`, and the authorize endpoint grants only scopes the client row allows. The console
 * client row (the control plane's one confidential client) gets `tenant:write` here, so a
 * deployment that was seeded before keeps signing in without re-running `seed-control-plane`.
 */
export class ConsoleWriteScope1764000016000 implements MigrationInterface {
  name = 'ConsoleWriteScope1764000016000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE clients SET scopes = array_append(scopes, 'tenant:write')
        WHERE tenant_id = 'control-plane' AND type = 'confidential' AND NOT ('tenant:write' = ANY (scopes))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE clients SET scopes = array_remove(scopes, 'tenant:write')
        WHERE tenant_id = 'control-plane' AND type = 'confidential'`,
    );
  }
}
