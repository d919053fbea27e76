import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DailyStatsRepository } from '../directory/daily-stats.repository';
import { AppError } from '../errors/app-error';
import { undoneOnDependencyFailure } from '../errors/dependency-failure';
import { RateLimiter } from '../platform/rate-limit/rate-limiter';
import { BrowserFlows, type GuestRequestContext, type WithFlowCookie } from './browser-flows';
import { CustomerSessions, type CustomerTokenSet, type Issued, type NewSession } from './customer-sessions';
import { FlowRecordsStore } from './flow-records.store';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { TenantClients } from './tenant-clients';
import type { ClientRecord } from '../directory/records';
import { RemovedProviders } from './removed-providers';

export type GuestResponse = {
  user_id: string;
  upgrade_proof: { proof_id: string; expires_in: number };
} & CustomerTokenSet;

/** Guest creation, linking intents and explicit sign-in with a provider proof (spec 4.3). */
@Injectable()
export class GuestService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly records: FlowRecordsStore,
    private readonly accounts: GuestAccountsRepository,
    private readonly sessions: CustomerSessions,
    private readonly limiter: RateLimiter,
    private readonly stats: DailyStatsRepository,
    private readonly removedProviders: RemovedProviders,
  ) {}

  /** Rule 3: the user id is always minted here; nothing the client sends names a user. */
  async create(ctx: GuestRequestContext): Promise<WithFlowCookie<Issued<GuestResponse>>> {
    const recent = await this.clients.resolveRecent(ctx.tenantId, ctx.clientId);
    const domain = `svc:tenant:${ctx.tenantId}`;
    // The tenant's three budgets share its slot, so they are taken in one round trip, all or none:
    // a request its address's budgets refuse never spends the tenant's ceiling (contract section
    // 10), and guest creation pays one script here besides its network's.
    const slot = ctx.tenantId;
    await this.limiter.hit(
      {
        name: 'guest-create-client-ip',
        domain,
        subject: `${recent.id}\0${ctx.ip}`,
        budget: this.config.rateLimits.guestCreateClientIp,
        slot,
      },
      { name: 'guest-create-ip', domain, subject: ctx.ip, budget: this.config.rateLimits.guestCreateTenantIp, slot },
      // A ceiling per tenant, whatever the networks.
      {
        name: 'guest-create-tenant',
        domain,
        subject: ctx.tenantId,
        budget: this.config.rateLimits.guestCreateTenant,
        slot,
      },
    );
    return this.flows.within(ctx, async (flow) => {
      const session = this.sessions.newSession();
      const { client, userId } = await this.insertGuest(ctx, recent, session);
      const ttl = this.config.ttl.upgradeProof;
      // The upgrade proof and the live session are independent writes, sent together to save a
      // round trip on the hot path; the proof goes first, as activating signs synchronously after
      // sending its own writes. If either fails nothing is answered: a session whose refresh token
      // was never handed out, or a proof bound to it, is of no use to anyone and expires.
      const [proofId, tokens] = await Promise.all([
        this.records.putProof(
          ctx.flowId,
          {
            kind: 'upgrade',
            tenantId: ctx.tenantId,
            clientId: client.id,
            cookieHash: flow.cookieHash,
            userId,
            sessionId: session.id,
          },
          ttl,
        ),
        this.sessions.activate(client, userId, session, 'guest'),
      ]);
      return { answer: { user_id: userId, upgrade_proof: { proof_id: proofId, expires_in: ttl }, ...tokens }, client };
    });
  }

  /**
   * The insert re-checks the recently read client row; when the row has changed since, it is read
   * afresh (refusing a client disabled or a tenant deactivated in the meantime) and the insert runs
   * once more, so guest creation never runs on a stale row.
   */
  private async insertGuest(
    ctx: GuestRequestContext,
    recent: ClientRecord,
    session: NewSession,
  ): Promise<{ client: ClientRecord; userId: string }> {
    const insert = (client: ClientRecord) =>
      this.accounts.createGuestWithSession(
        client,
        session.id,
        this.sessions.ttlFor(client),
        this.sessions.recoverable(client, session, 'guest'),
      );
    const userId = await insert(recent);
    if (userId) return { client: recent, userId };
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const retried = await insert(client);
    if (!retried) throw new AppError('temporarily_unavailable', 'The client changed during the request; try again.');
    return { client, userId: retried };
  }

  /**
   * Create or renew the flow's linking intent (spec 4.3): bound to subject, session, client,
   * tenant, flow and flow-cookie hash; a live intent of the flow is never replaced by another
   * session. A guest's upgrade proof, when presented, must be its own and is consumed. `subject:
   * 'regular'` is a full account's intent (`me/linking-intent`, contract 14), with the same rules.
   */
  async linkingIntent(
    ctx: GuestRequestContext,
    guest: { userId: string; sessionId: string; clientId: string },
    { upgradeProofId, subject = 'guest' }: { upgradeProofId?: string | undefined; subject?: 'guest' | 'regular' } = {},
  ): Promise<WithFlowCookie<{ intent_id: string; expires_in: number }> & { created: boolean }> {
    if (guest.clientId !== ctx.clientId) throw new AppError('invalid_proof');
    // Guest tokens are free and each new flow id claims a flow and an intent: a budget per
    // session, besides the per-network one, before anything is read or written (contract section 10).
    await this.limiter.hit({
      name: 'linking-intent-session',
      domain: `svc:tenant:${ctx.tenantId}`,
      subject: guest.sessionId,
      budget: this.config.rateLimits.linkingIntentSession,
    });
    // Independent reads, taken together: an unknown client's refusal still comes first.
    const [, active] = await Promise.all([
      this.clients.resolve(ctx.tenantId, ctx.clientId),
      this.accounts.isActive(ctx.tenantId, guest.userId, subject),
    ]);
    if (!active)
      throw new AppError(
        'invalid_proof',
        subject === 'guest'
          ? 'Only an active guest can link a credential here.'
          : 'Only a full account links a credential here; a guest upgrades.',
      );
    const ttl = this.config.ttl.linkingIntent;
    const { body, newFlowCookie } = await this.flows.within(ctx, async (flow) => {
      const binding = { tenantId: ctx.tenantId, clientId: ctx.clientId, cookieHash: flow.cookieHash };
      const upgradeProof =
        upgradeProofId === undefined
          ? undefined
          : await this.records.consumeUpgradeProof(ctx.flowId, upgradeProofId, binding, guest.userId, guest.sessionId);
      if (upgradeProof === null) throw new AppError('invalid_proof');
      const put = await this.records.putIntent(
        ctx.flowId,
        { ...binding, userId: guest.userId, sessionId: guest.sessionId, createdAt: await this.accounts.now() },
        ttl,
      );
      if (put.outcome === 'conflict') {
        // Refused, so nothing is spent: the proof goes back (consumed first, it has one winner).
        await upgradeProof?.restore();
        throw new AppError('intent_conflict');
      }
      return { intentId: put.intent.intentId, created: put.outcome === 'created' };
    });
    return {
      body: { intent_id: body.intentId, expires_in: ttl },
      ...(newFlowCookie ? { newFlowCookie } : {}),
      created: body.created,
    };
  }

  /** Explicit sign-in to the account that owns a proven credential (contract section 6). */
  async signIn(ctx: GuestRequestContext, proofId: string): Promise<Issued<{ user_id: string } & CustomerTokenSet>> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const flow = await this.flows.requireKnown(ctx);
    const consumed = await this.records.consumeProviderProof(ctx.flowId, proofId, {
      tenantId: ctx.tenantId,
      clientId: client.id,
      cookieHash: flow.cookieHash,
    });
    if (!consumed) throw new AppError('invalid_proof');
    const { proof } = consumed;
    const signedIn = async (): Promise<{ user_id: string } & CustomerTokenSet> => {
      await this.removedProviders.refuseProofOfRemoved(ctx.tenantId, proof.provider);
      const { userId, session } = await this.accounts.transaction(async (m) => {
        // The credential's owner now, which need not be the user the proof named when issued.
        const owner = await this.accounts.lockOwnerForSignIn(ctx.tenantId, proof.identityId, m);
        if (owner === null) throw new AppError('invalid_proof');
        const recorded = await this.sessions.record(client, owner, 'sign_in', m);
        // Last, so the day's counter row is locked only until the commit (contract 15's chart).
        await this.stats.count(m, ctx.tenantId, 'sign_ins');
        return { userId: owner, session: recorded };
      });
      return { user_id: userId, ...(await this.sessions.activate(client, userId, session, 'sign_in')) };
    };
    // A 503 hands out no token, so the proof goes back, as after an upgrade's or a link's 503. A
    // session row committed before Redis failed never became live and only expires; the proof
    // stays bound to its flow, and lockOwnerForSignIn judges it again on the retry.
    const answer = await undoneOnDependencyFailure(signedIn(), consumed.restore);
    return { answer, client };
  }
}
