import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DailyStatsRepository } from '../directory/daily-stats.repository';
import { AuditTrail } from '../directory/audit-trail.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError, DependencyUnavailableError } from '../errors/app-error';
import { isDependencyFailure } from '../errors/dependency-failure';
import { newSecret } from '../platform/crypto/ids';
import { SessionStore } from '../platform/session-store/session-store';
import type { GuestRequestContext } from './browser-flows';
import { CustomerSessions, type CustomerTokenSet, type Issued, type NewSession } from './customer-sessions';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { IntentAndProof } from './intent-and-proof';
import type { ClientRecord } from '../directory/records';

/** `provider`: `email`, `chat_platform` or an OpenID Connect provider's id (contract 14). */
export interface LinkedIdentity {
  provider: string;
  provider_subject: string;
  email: string | null;
}

export type UpgradeResponse = {
  user_id: string;
  linked_identity: LinkedIdentity;
} & CustomerTokenSet;

/** What the upgrade's transaction committed. */
interface Attached {
  readonly client: ClientRecord;
  readonly replacement: NewSession;
  readonly linkedIdentity: UpgradeResponse['linked_identity'];
}

/**
 * Guest upgrade (spec 4.3 rules 1–8, spec 3, spec 6). Every failed check of the intent or the
 * proof answers the same 400 invalid_proof, so no check is revealed (contract section 2).
 */
@Injectable()
export class UpgradeService {
  private readonly logger = new Logger('GuestUpgrade');

  constructor(
    private readonly intentAndProof: IntentAndProof,
    private readonly accounts: GuestAccountsRepository,
    private readonly customerSessions: CustomerSessions,
    private readonly sessions: SessionStore,
    private readonly sessionRecords: SessionRecordsRepository,
    private readonly audit: AuditTrail,
    private readonly stats: DailyStatsRepository,
  ) {}

  async upgrade(
    ctx: GuestRequestContext,
    guest: { userId: string; sessionId: string; clientId: string },
    proofId: string,
  ): Promise<Issued<UpgradeResponse>> {
    await this.intentAndProof.admit(ctx, guest, 'guest-upgrade-subject');
    // Only a guest upgrades (a full account links, contract 14): refused before the intent and the
    // proof are taken, so a call to the wrong route spends nothing. A guest upgraded meanwhile is
    // caught again under the row lock (moveIdentity).
    if (!(await this.accounts.isActive(ctx.tenantId, guest.userId, 'guest'))) throw new AppError('invalid_proof');
    // The session must be live now, not only when the bearer was checked (spec 4.3 rule 2). The
    // mark also tells the refresh grant to ask PostgreSQL about this session from here on.
    const generation = await this.sessions.markUpgrade(guest.sessionId, guest);
    if (generation === null) throw new AppError('invalid_proof');
    const attached = await this.attach(ctx, { ...guest, generation }, proofId).catch(async (err: unknown) => {
      // A refusal rolled everything back: the session is an ordinary guest session again. After a
      // dependency failure the commit may or may not have happened, so the mark stays.
      if (err instanceof AppError && !(err instanceof DependencyUnavailableError))
        await this.sessions.unmarkUpgrade(guest.sessionId).catch(() => undefined);
      throw err;
    });
    // After the commit: the old session leaves Redis and the replacement becomes live. Spec 4.3
    // rule 4: the old session's row is already revoked, so should Redis fail here the refresh grant
    // still never renews it (it asks PostgreSQL). The answer is then 503 and the replacement's tokens
    // are never seen; the row's hand-over answers the guest's refresh token with the replacement,
    // which is rebuilt if it never became live (contract 13; SessionStore.successor). Should this
    // answer be lost instead, the same token gets the same replacement within the reuse interval.
    const [, tokens] = await Promise.all([
      this.sessions.revoke(guest.sessionId).catch((err: unknown) => {
        throw new DependencyUnavailableError('redis', err);
      }),
      this.customerSessions.activate(attached.client, guest.userId, attached.replacement, 'upgrade'),
    ]);
    // Unrecorded, the hand-over stays open until the replacement's first refresh, as after a 503:
    // longer than the reuse interval, never to anyone without the guest's token. Not worth a 503.
    await this.sessionRecords.successorAnswered(guest.sessionId).catch((err: unknown) => {
      this.logger.warn({ err, tenant: ctx.tenantId }, 'upgrade answered without noting it on the replaced session');
    });
    this.logger.log({ tenant: ctx.tenantId, provider: attached.linkedIdentity.provider }, 'guest upgraded');
    return {
      answer: { user_id: guest.userId, linked_identity: attached.linkedIdentity, ...tokens },
      client: attached.client,
    };
  }

  /**
   * Rules 2–7 and the audit row (spec 6), all committed in one transaction or not at all. Only rows
   * are written inside it: Redis and the signatures wait until it has committed (`upgrade`).
   */
  private async attach(
    ctx: GuestRequestContext,
    guest: { userId: string; sessionId: string; clientId: string; generation: number },
    proofId: string,
  ): Promise<Attached> {
    // Rules 2 and 3: intent and proof consumed together, once, only when fresh and bound alike.
    const { client, intent, proof, restoreProof, restoreIntentAndProof } = await this.intentAndProof.consume(
      ctx,
      guest,
      proofId,
    );

    // Rules 4 and 6, spec 6: the move, the deactivation, the replacement session's row, the old
    // session's revocation with its hand-over to the replacement, and the audit row in one
    // transaction.
    const work = async (m: EntityManager): Promise<NewSession> => {
      const outcome = await this.accounts.moveIdentity(m, {
        tenantId: ctx.tenantId,
        userId: guest.userId,
        identityId: proof.identityId,
        intentCreatedAt: intent.createdAt,
      });
      // Rule 7: another owner keeps the credential; no merge is attempted.
      if (outcome === 'in_use') throw new AppError('identity_in_use');
      // The intent's subject must still be an active guest (spec 4.3 linking intent rule 1): a
      // second upgrade that raced past the bearer check before the first revoked the session is
      // an intent that no longer holds, not a credential in use.
      // A proof whose identity is gone (unlinked or erased since) no longer proves anything.
      if (outcome === 'already_owned' || outcome === 'not_guest' || outcome === 'gone')
        throw new AppError('invalid_proof');
      const replacement = await this.customerSessions.record(client, guest.userId, 'upgrade', m);
      const superseded = await this.sessionRecords.supersedeWithin(m, {
        sessionId: guest.sessionId,
        userId: guest.userId,
        successorId: replacement.id,
        salt: newSecret(),
        generation: guest.generation,
      });
      if (!superseded) throw new AppError('invalid_proof');
      await this.audit.record(
        {
          type: 'guest.upgraded',
          tenantId: ctx.tenantId,
          subject: guest.userId,
          data: {
            old_session_id: guest.sessionId,
            new_session_id: replacement.id,
            provider: proof.provider,
            client_id: client.id,
          },
        },
        m,
      );
      // Last, so the day's counter row is locked only until the commit (contract 15's chart).
      await this.stats.count(m, ctx.tenantId, 'upgrades');
      return replacement;
    };
    let failedBeforeCommit = false;
    const replacement = await this.accounts
      .transaction((m) =>
        work(m).catch((err: unknown) => {
          // Thrown by the work itself: COMMIT was never sent, so nothing of it was committed.
          failedBeforeCommit = true;
          throw err;
        }),
      )
      .catch(async (err: unknown) => {
        // Contract 13: the player who finds an existing account signs in to it with this same proof.
        if (err instanceof AppError && err.code === 'identity_in_use') await restoreProof();
        // PostgreSQL refused the work (503, contract 10) and certainly nothing was committed: the
        // guest keeps its intent and proof, so the retry upgrades. A COMMIT that failed may have
        // committed, so then both stay spent, as the session's upgrade mark stays (`upgrade`).
        else if (failedBeforeCommit && isDependencyFailure(err)) await restoreIntentAndProof().catch(() => undefined);
        throw err;
      });
    return {
      client,
      replacement,
      linkedIdentity: { provider: proof.provider, provider_subject: proof.providerSubject, email: proof.email },
    };
  }
}
