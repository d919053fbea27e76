import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../directory/audit-trail.repository';
import { AppError } from '../errors/app-error';
import { isDependencyFailure } from '../errors/dependency-failure';
import type { PrincipalOf } from '../http/principal';
import type { GuestRequestContext } from './browser-flows';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { IntentAndProof } from './intent-and-proof';
import type { LinkedIdentity } from './upgrade.service';

/**
 * A full account links and unlinks credentials (contract 14): `me/identities` mirrors the guest's
 * upgrade (the intent and the proof consumed together, once, bound to tenant, client, flow and
 * session; the credential moves only from a pristine provisional user, spec 4.3 rule 6; another
 * owner keeps it, 409 identity_in_use) but keeps the session; removing one never removes the last.
 */
@Injectable()
export class AccountLinkingService {
  constructor(
    private readonly intentAndProof: IntentAndProof,
    private readonly accounts: GuestAccountsRepository,
    private readonly audit: AuditTrail,
  ) {}

  async link(
    ctx: GuestRequestContext,
    player: PrincipalOf<'guest'>,
    proofId: string,
  ): Promise<{ user_id: string; linked_identity: LinkedIdentity }> {
    await this.intentAndProof.admit(ctx, player, 'account-link-subject');
    // Only a full account links here (a guest upgrades): refused before the intent and the proof
    // are taken, so a call to the wrong route spends nothing.
    if (!(await this.accounts.isActive(ctx.tenantId, player.userId, 'regular'))) throw new AppError('invalid_proof');
    const { client, intent, proof, restoreProof, restoreIntentAndProof } = await this.intentAndProof.consume(
      ctx,
      player,
      proofId,
    );
    await this.accounts
      .transaction(async (m) => {
        const outcome = await this.accounts.moveIdentity(m, {
          tenantId: ctx.tenantId,
          userId: player.userId,
          identityId: proof.identityId,
          intentCreatedAt: intent.createdAt,
          to: 'regular',
        });
        if (outcome === 'in_use') throw new AppError('identity_in_use');
        // Not a full account any more, or the proven identity is gone (unlinked or erased since).
        if (outcome === 'not_guest' || outcome === 'gone') throw new AppError('invalid_proof');
        // Linked already (a retry whose answer was lost): nothing changes, nothing is recorded.
        if (outcome === 'already_owned') return;
        await this.audit.record(
          {
            type: 'identity.linked',
            tenantId: ctx.tenantId,
            subject: player.userId,
            data: { provider: proof.provider, client_id: client.id, session_id: player.sessionId },
          },
          m,
        );
      })
      .catch(async (err: unknown) => {
        // As at upgrade (contract 13): the proof stays usable to sign in to the account that owns it.
        if (err instanceof AppError && err.code === 'identity_in_use') await restoreProof();
        // A dependency refused the work (503, contract 10): the caller keeps what it came with, so
        // the retry links (contract 13). Should the commit have happened unseen, the retry finds the
        // credential linked already and answers as before without recording it twice.
        else if (isDependencyFailure(err)) await restoreIntentAndProof().catch(() => undefined);
        throw err;
      });
    return {
      user_id: player.userId,
      linked_identity: { provider: proof.provider, provider_subject: proof.providerSubject, email: proof.email },
    };
  }

  async unlink(player: PrincipalOf<'guest'>, provider: string, providerSubject: string): Promise<{ unlinked: true }> {
    await this.accounts.transaction(async (m) => {
      const outcome = await this.accounts.unlinkIdentity(m, {
        tenantId: player.tenantId,
        userId: player.userId,
        provider,
        providerSubject,
      });
      if (outcome === 'not_found') throw new AppError('not_found', 'The account has no such credential.');
      if (outcome === 'last_identity') throw new AppError('last_identity');
      await this.audit.record(
        {
          type: 'identity.unlinked',
          tenantId: player.tenantId,
          subject: player.userId,
          data: { provider, client_id: player.clientId, session_id: player.sessionId },
        },
        m,
      );
    });
    return { unlinked: true };
  }
}
