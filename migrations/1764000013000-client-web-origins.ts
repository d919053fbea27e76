import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Web origins of browser clients (contract section 11): the origins given with
 * `client create --web-origins`, beside the origins of the redirect URIs, which count too. They
 * decide which pages may call the tenant API by CORS. Only browser clients have any.
 */
export class ClientWebOrigins1764000013000 implements MigrationInterface {
  name = 'ClientWebOrigins1764000013000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE clients ADD COLUMN web_origins text[] NOT NULL DEFAULT '{}'`);
    await q.query(
      `ALTER TABLE clients ADD CONSTRAINT clients_web_origins_browser_only
         CHECK (type = 'browser' OR cardinality(web_origins) = 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE clients DROP COLUMN web_origins`);
  }
}
