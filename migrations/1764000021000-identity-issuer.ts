import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identities of OpenID Connect providers record the issuer that proved them, so `provider add`
 * can refuse an id whose players came from another issuer. Identities proved before this was
 * recorded take the issuer their provider is registered with now; those of a provider no longer
 * registered stay without one and do not block `provider add`.
 */
export class IdentityIssuer1764000021000 implements MigrationInterface {
  name = 'IdentityIssuer1764000021000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE identities i SET metadata = i.metadata || jsonb_build_object('issuer', p.issuer)
         FROM identity_providers p
        WHERE p.tenant_id = i.tenant_id AND p.id = i.provider AND NOT (i.metadata ? 'issuer')`,
    );
  }

  async down(): Promise<void> {
    // The issuer is a fact about how each identity was proved: nothing to undo.
  }
}
