import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console finds a player by address through a keyed digest of it (issue 26), never through
 * the plain address columns. The digest is an HMAC under PRIVACY_KEY, which migrations do not
 * hold: the column starts empty on existing rows and `identity redigest` (admin CLI) fills it.
 */
export class IdentityEmailDigest1764000020000 implements MigrationInterface {
  name = 'IdentityEmailDigest1764000020000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE identities ADD COLUMN email_digest text`);
    await q.query(`CREATE INDEX identities_email_digest ON identities (tenant_id, email_digest)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX identities_email_digest`);
    await q.query(`ALTER TABLE identities DROP COLUMN email_digest`);
  }
}
