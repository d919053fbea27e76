import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each tenant's chat-platform application credentials. The secret must be sent to the
 * platform, so it is stored sealed (AES-256-GCM under a key derived from the privacy key)
 * rather than hashed.
 */
export class ChatPlatformApps1764000003000 implements MigrationInterface {
  name = 'ChatPlatformApps1764000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE chat_platform_apps (
        tenant_id text PRIMARY KEY REFERENCES tenants(id),
        client_id text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 200),
        client_secret_sealed text NOT NULL,
        redirect_uri text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chat_platform_apps`);
  }
}
