import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { canonicalEmail, controlPlaneEmailClaim } from '../directory/email-address';
import { IdentitiesRepository } from '../directory/identities.repository';
import { AppError } from '../errors/app-error';
import { EmailCodeSender } from '../platform/email-codes/email-code-sender';
import { EmailCodeBudgets } from '../platform/email-codes/email-code-budgets';
import { EmailCodesStore, MANAGEMENT_CODES } from '../platform/email-codes/email-codes.store';
import { RateLimiter } from '../platform/rate-limit/rate-limiter';
import { SessionStore } from '../platform/session-store/session-store';
import { AuthorizationCodesStore } from './authorization-codes.store';
import { ControlFlowsStore, type ControlFlow } from './control-flows.store';

import { controlPlaneIssuer } from './management-tokens';
import { undoneOnDependencyFailure } from '../errors/dependency-failure';

const RATE_DOMAIN = 'svc:management';

export interface EmailRequestContext {
  readonly flowId: string;
  readonly flowCookie: string | undefined;
  readonly ip: string;
}

/**
 * Management sign-in by email code (spec 3, 4.2): `start` sends a code, `confirm` checks it,
 * resolves or creates the control-plane user and email identity, and issues an authorization code.
 */
@Injectable()
export class EmailSignInService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly flows: ControlFlowsStore,
    private readonly codes: EmailCodesStore,
    private readonly authorizationCodes: AuthorizationCodesStore,
    private readonly identities: IdentitiesRepository,
    private readonly sessions: SessionStore,
    private readonly codeSender: EmailCodeSender,
    private readonly limiter: RateLimiter,
    private readonly codeBudgets: EmailCodeBudgets,
  ) {}

  /**
   * Known and unknown addresses take the same path: nothing is looked up before confirm, so the
   * answer and the work do not reveal whether an account exists.
   */
  async start(ctx: EmailRequestContext, rawEmail: string): Promise<{ expires_in: number }> {
    await this.boundFlow(ctx);
    const email = canonicalEmail(rawEmail);
    const rl = this.config.rateLimits;
    await this.limiter.hit(
      { name: 'mgmt-ip', domain: RATE_DOMAIN, subject: ctx.ip, budget: rl.managementIp },
      { name: 'mgmt-flow', domain: RATE_DOMAIN, subject: ctx.flowId, budget: rl.managementFlowAttempts },
    );
    const allowance = await this.codeBudgets.beforeSend(
      MANAGEMENT_CODES,
      { flowId: ctx.flowId, email, network: ctx.ip },
      rl.managementEmailSend,
    );
    await this.codeSender.send(MANAGEMENT_CODES, ctx.flowId, email, allowance, (code) => ({
      subject: 'Your console sign-in code',
      text: `Your sign-in code is ${code}.\n\nIt expires in ${Math.round(this.config.ttl.emailCode / 60)} minutes. If you did not try to sign in, ignore this message.\n`,
    }));
    return { expires_in: this.config.ttl.emailCode };
  }

  async confirm(ctx: EmailRequestContext, rawEmail: string, code: string): Promise<{ redirect_to: string }> {
    const flow = await this.boundFlow(ctx);
    const email = canonicalEmail(rawEmail);
    const rl = this.config.rateLimits;
    await this.limiter.hit(
      { name: 'mgmt-ip', domain: RATE_DOMAIN, subject: ctx.ip, budget: rl.managementIp },
      { name: 'mgmt-flow', domain: RATE_DOMAIN, subject: ctx.flowId, budget: rl.managementFlowAttempts },
    );
    const taken = await this.codes.take(MANAGEMENT_CODES, ctx.flowId, email, code);
    if (!taken) throw new AppError('invalid_code');
    // The code is spent only with the authorization code it produced: a dependency that refuses
    // before the flow has ended (503, contract 10) puts it back, so the same code works on the retry.
    const authorizationCode = await undoneOnDependencyFailure(this.authorize(flow, ctx.flowId, email), taken.restore);
    const url = new URL(flow.redirectUri);
    url.searchParams.set('code', authorizationCode);
    url.searchParams.set('state', flow.state);
    url.searchParams.set('iss', controlPlaneIssuer(this.config));
    return { redirect_to: url.toString() };
  }

  /**
   * The authorization code of a proven email, made before the flow ends: the flow yields one (a
   * second confirm on it finds no flow), and one made for a flow that ended meanwhile is never
   * handed out.
   */
  private async authorize(flow: ControlFlow, flowId: string, email: string): Promise<string> {
    const { user, identity } = await this.identities.resolveOrCreate(controlPlaneEmailClaim(email), 'regular');
    if (user.status !== 'active' || identity.status !== 'active') throw new AppError('invalid_code');
    const authorizationCode = await this.authorizationCodes.create({
      clientId: flow.clientId,
      redirectUri: flow.redirectUri,
      codeChallenge: flow.codeChallenge,
      scope: flow.scope,
      userId: user.id,
      email,
      sessionId: this.sessions.newSessionId(),
    });
    if (!(await this.flows.finish(flowId))) throw new AppError('forbidden', 'The sign-in flow has ended.');
    return authorizationCode;
  }

  private async boundFlow(ctx: EmailRequestContext): Promise<ControlFlow> {
    const flow = await this.flows.getBound(ctx.flowId, ctx.flowCookie);
    if (!flow) throw new AppError('forbidden', 'The sign-in flow cookie is missing or does not belong to this flow.');
    return flow;
  }
}
