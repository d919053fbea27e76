import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Durable facts about sessions, memberships and consents. Redis stays authoritative for
 * whether a session is live; the `sessions` rows record that a user ever had one, which the
 * guest-upgrade rule (spec 4.3 rule 6) needs to tell a pristine provisional user apart.
 */
export class SessionsMembershipsConsents1764000001000 implements MigrationInterface {
  name = 'SessionsMembershipsConsents1764000001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sessions (
        id text PRIMARY KEY CHECK (id ~ '^ses_[A-Za-z0-9_-]{16,64}$'),
        tenant_id text NOT NULL REFERENCES tenants(id),
        user_id text NOT NULL REFERENCES users(id),
        client_id text NOT NULL REFERENCES clients(id),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX sessions_user_idx ON sessions (user_id)`);
    await q.query(`
      CREATE TABLE memberships (
        tenant_id text NOT NULL REFERENCES tenants(id),
        user_id text NOT NULL REFERENCES users(id),
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id)
      )`);
    await q.query(`CREATE INDEX memberships_user_idx ON memberships (user_id)`);
    await q.query(`
      CREATE TABLE consents (
        tenant_id text NOT NULL REFERENCES tenants(id),
        user_id text NOT NULL REFERENCES users(id),
        client_id text NOT NULL REFERENCES clients(id),
        scopes text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, client_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE consents`);
    await q.query(`DROP TABLE memberships`);
    await q.query(`DROP TABLE sessions`);
  }
}
