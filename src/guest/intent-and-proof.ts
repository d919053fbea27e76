import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { undoneOnDependencyFailure } from '../errors/dependency-failure';
import { RateLimiter } from '../platform/rate-limit/rate-limiter';
import { BrowserFlows, type GuestRequestContext } from './browser-flows';
import { FlowRecordsStore, type LinkingIntent, type ProviderProof } from './flow-records.store';
import { RemovedProviders } from './removed-providers';
import { TenantClients } from './tenant-clients';
import type { ClientRecord } from '../directory/records';

export interface ConsumedIntentAndProof {
  readonly client: ClientRecord;
  readonly intent: LinkingIntent;
  readonly proof: ProviderProof;
  /** Puts the proof back for the rest of its lifetime (a 409 identity_in_use, contract 13). */
  readonly restoreProof: () => Promise<void>;
  /** Puts both back for the rest of their lifetimes (a link PostgreSQL refused, contract 13). */
  readonly restoreIntentAndProof: () => Promise<void>;
}

/**
 * The first step of attaching a credential, shared by the guest's upgrade and a full account's
 * `me/identities` (spec 4.3 rules 2–3, contract 14): the flow's linking intent and the provider
 * proof are consumed together, once, only when both are fresh and bound to the same tenant,
 * client, flow cookie, session and user; an email proof must name a verified address. Every failed
 * check is the same 400 invalid_proof.
 */
@Injectable()
export class IntentAndProof {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly records: FlowRecordsStore,
    private readonly limiter: RateLimiter,
    private readonly removedProviders: RemovedProviders,
  ) {}

  /**
   * Before anything is read: the subject's attempts are limited (per tenant, under the budget's own
   * name), and the bearer's client must be the client the request names.
   */
  async admit(
    ctx: GuestRequestContext,
    subject: { userId: string; clientId: string },
    budgetName: 'guest-upgrade-subject' | 'account-link-subject',
  ): Promise<void> {
    await this.limiter.hit({
      name: budgetName,
      domain: `svc:tenant:${ctx.tenantId}`,
      subject: subject.userId,
      budget: this.config.rateLimits.guestUpgradeSubject,
    });
    if (subject.clientId !== ctx.clientId) throw new AppError('invalid_proof');
  }

  async consume(
    ctx: GuestRequestContext,
    subject: { userId: string; sessionId: string },
    proofId: string,
  ): Promise<ConsumedIntentAndProof> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const flow = await this.flows.requireKnown(ctx);
    const consumed = await this.records.consumeForUpgrade(
      ctx.flowId,
      proofId,
      { tenantId: ctx.tenantId, clientId: client.id, cookieHash: flow.cookieHash },
      subject.sessionId,
      subject.userId,
    );
    if (!consumed) throw new AppError('invalid_proof');
    // An email proof names a verified email identity; a chat or provider proof was read from the
    // platform's user API or a checked ID token by the callback that issued it.
    if (consumed.proof.provider === 'email' && !consumed.proof.emailVerified) throw new AppError('invalid_proof');
    // Asked once the proof names its provider: should PostgreSQL fail to answer (503), both go back.
    await undoneOnDependencyFailure(
      this.removedProviders.refuseProofOfRemoved(ctx.tenantId, consumed.proof.provider),
      consumed.restoreIntentAndProof,
    );
    return { client, ...consumed };
  }
}
