import type { DataSource } from 'typeorm';
import { IdentityEmailDigest } from './identity-email-digest';
import { nullableText, rowsOf, text } from '../platform/database/row-decoders';

export interface RedigestResult {
  /** Rows whose digest was written: missing (rows older than the column) or under an older key. */
  readonly digested: number;
  /** Rows whose digest was already the first key's (or that have no address and need none). */
  readonly current: number;
}

/**
 * Brings every identity's `email_digest` to the first PRIVACY_KEY (`identity redigest`): after the
 * upgrade that added the column, and after a PRIVACY_KEY rotation before the old key is dropped.
 * Walks the table in id order, a batch per statement pair, so it never holds many rows or locks at
 * once and can be stopped and run again: a row already current is not written, so a second run
 * writes nothing. An address never changes on a row, so a digest computed from a read stays right.
 */
export class IdentityRedigest {
  constructor(
    private readonly db: DataSource,
    private readonly emailDigest: IdentityEmailDigest,
  ) {}

  async run(batchSize: number): Promise<RedigestResult> {
    let after = '';
    let digested = 0;
    let current = 0;
    for (;;) {
      const rows = rowsOf(
        await this.db.query(
          `SELECT id, tenant_id, provider, provider_subject, email, email_verified, email_digest FROM identities
            WHERE id > $1 ORDER BY id LIMIT $2`,
          [after, batchSize],
        ),
      );
      const last = rows.at(-1);
      if (last === undefined) return { digested, current };
      after = text(last, 'id');
      const stale = rows.flatMap((row) => {
        const want = this.emailDigest.of({
          tenantId: text(row, 'tenant_id'),
          provider: text(row, 'provider'),
          providerSubject: text(row, 'provider_subject'),
          email: nullableText(row, 'email'),
          emailVerified: row['email_verified'] === true,
        });
        return want === nullableText(row, 'email_digest') ? [] : [{ id: text(row, 'id'), digest: want }];
      });
      current += rows.length - stale.length;
      if (stale.length === 0) continue;
      await this.db.query(
        `UPDATE identities i SET email_digest = s.digest
           FROM unnest($1::text[], $2::text[]) AS s(id, digest) WHERE i.id = s.id`,
        [stale.map((s) => s.id), stale.map((s) => s.digest)],
      );
      digested += stale.length;
    }
  }
}
