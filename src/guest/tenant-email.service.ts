import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { canonicalEmail } from '../directory/email-address';
import { AppError } from '../errors/app-error';
import { undoneOnDependencyFailure } from '../errors/dependency-failure';
import { EmailCodeSender } from '../platform/email-codes/email-code-sender';
import { EmailCodeBudgets } from '../platform/email-codes/email-code-budgets';
import { EmailCodesStore, tenantCodes, type CodeRealm } from '../platform/email-codes/email-codes.store';
import { RateLimiter } from '../platform/rate-limit/rate-limiter';
import { BrowserFlows, type GuestRequestContext, type WithFlowCookie } from './browser-flows';
import { FlowRecordsStore, type Binding } from './flow-records.store';
import { ProviderProofs } from './provider-proofs';
import { TenantClients } from './tenant-clients';

/**
 * The tenant's email-verification flow (contract section 6): a code to the address, then a
 * one-time provider proof bound to tenant, client and browser flow. A new address resolves to a
 * provisional user (spec 4.3 rule 6).
 */
@Injectable()
export class TenantEmailService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly flows: BrowserFlows,
    private readonly codes: EmailCodesStore,
    private readonly proofs: ProviderProofs,
    private readonly codeSender: EmailCodeSender,
    private readonly limiter: RateLimiter,
    private readonly codeBudgets: EmailCodeBudgets,
    private readonly records: FlowRecordsStore,
  ) {}

  async start(ctx: GuestRequestContext, rawEmail: string): Promise<WithFlowCookie<{ expires_in: number }>> {
    await this.clients.resolve(ctx.tenantId, ctx.clientId);
    // A flow under way shows its cookie before its send budget is spent (issue 22, point 6):
    // someone who knows only a flow id (it travels in page URLs and logs) must not use up the
    // resends of the player who holds it. A new flow is still claimed only after every budget.
    await this.flows.requireKnownIfUnderWay(ctx);
    const email = canonicalEmail(rawEmail);
    const realm = tenantCodes(ctx.tenantId);
    // Budgets before the flow: a 429 leaves no flow claimed (contract section 10).
    const rl = this.config.rateLimits;
    await this.limiter.hit({
      name: 'tenant-email-ip',
      domain: realm.domain,
      subject: ctx.ip,
      budget: rl.guestCreateTenantIp,
    });
    const allowance = await this.codeBudgets.beforeSend(
      realm,
      { flowId: ctx.flowId, email, network: ctx.ip },
      rl.tenantEmailSend,
    );
    return this.flows.within(ctx, async () => {
      await this.codeSender.send(realm, ctx.flowId, email, allowance, (code) => ({
        subject: 'Your verification code',
        text: `Your verification code is ${code}.\n\nIt expires in ${Math.round(this.config.ttl.emailCode / 60)} minutes. If you did not ask for it, ignore this message.\n`,
      }));
      return { expires_in: this.config.ttl.emailCode };
    });
  }

  async verify(
    ctx: GuestRequestContext,
    rawEmail: string,
    code: string,
  ): Promise<{ proof_id: string; expires_in: number }> {
    const client = await this.clients.resolve(ctx.tenantId, ctx.clientId);
    const flow = await this.flows.requireKnown(ctx);
    const email = canonicalEmail(rawEmail);
    const realm = tenantCodes(ctx.tenantId);
    // Attempts count against the code (in check) and against the flow (contract section 10).
    const budget = this.config.rateLimits.tenantFlowAttempts;
    await this.limiter.hit({ name: 'tenant-flow', domain: realm.domain, subject: ctx.flowId, budget });
    const binding = { tenantId: ctx.tenantId, clientId: client.id, cookieHash: flow.cookieHash };
    // A repeat after a lost answer first, so that it never counts against a newer code of the flow.
    const again = await this.answeredBefore(realm, ctx.flowId, email, code, binding);
    if (again) return again;
    const taken = await this.codes.take(realm, ctx.flowId, email, code);
    if (!taken) throw new AppError('invalid_code');
    // The code is spent only with the proof it produced, remembered for a retry of a lost answer:
    // a 503 on the way puts it back.
    const issued = async (): Promise<{ proof_id: string; expires_in: number }> => {
      const proof = await this.proofs.issue(
        { ...binding, flowId: ctx.flowId },
        { provider: 'email', subject: email, verifiedEmail: email, metadata: {} },
        () => new AppError('invalid_code'),
      );
      await taken.remember(proof.proof_id, proof.expires_in);
      return proof;
    };
    return undoneOnDependencyFailure(issued(), taken.restore);
  }

  /**
   * A phone that lost the answer sends the same code again: the same flow (its cookie checked),
   * client and address get the proof the code was spent for, while that proof is unspent. Null
   * for anyone else and for a code never answered.
   */
  private async answeredBefore(
    realm: CodeRealm,
    flowId: string,
    email: string,
    code: string,
    binding: Binding,
  ): Promise<{ proof_id: string; expires_in: number } | null> {
    const proofId = await this.codes.answerOfSpent(realm, flowId, email, code);
    const left = proofId === null ? 0 : await this.records.providerProofLeft(flowId, proofId, binding);
    return proofId !== null && left > 0 ? { proof_id: proofId, expires_in: left } : null;
  }
}
