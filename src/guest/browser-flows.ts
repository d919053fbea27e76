import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { clientNetwork } from '../http/client-ip';
import { readCookie, setHostCookie, type SameSite } from '../http/cookies';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { BrowserFlowsStore, type FlowRecord } from './browser-flows.store';
import { registeredCorsOrigin } from './tenant-cors';

/**
 * Browser flows and their cookies, in one place (spec 2.4 and 4.3 rules 2–3, contract sections
 * 6, 8, 10 and 11): a `browser_flow_id` never seen before starts a flow and gets a secret
 * `__Host-svc_flow_{flowId}` cookie, stored only as a hash; a known flow must present its cookie.
 */

/** Flow cookies live at most one hour (contract section 8). */
export const BROWSER_FLOW_TTL_SECONDS = 3600;

export const flowCookieName = (flowId: string): string => `__Host-svc_flow_${flowId}`;

/** What a guest-facing controller hands its service from the HTTP request. */
export interface GuestRequestContext {
  readonly tenantId: string;
  readonly clientId: string;
  readonly flowId: string;
  /** The `__Host-svc_flow_{flowId}` cookie, when the browser sent one. */
  readonly flowCookie: string | undefined;
  readonly ip: string;
  /**
   * The registered web origin the request came from by CORS (contract section 11), undefined for a
   * same-site or non-browser request: the page a redirect sign-in it starts returns to.
   */
  readonly pageOrigin: string | undefined;
}

export function guestContext(
  req: Request,
  config: Pick<AppConfig, 'trustProxy'>,
  tenantId: string,
  body: { client_id: string; browser_flow_id: string },
): GuestRequestContext {
  return {
    tenantId,
    clientId: body.client_id,
    flowId: body.browser_flow_id,
    flowCookie: readCookie(req.headers.cookie, flowCookieName(body.browser_flow_id)),
    ip: clientNetwork(req, config.trustProxy),
    pageOrigin: registeredCorsOrigin(req),
  };
}

export interface BoundFlow {
  readonly flowId: string;
  /** sha256 of the flow cookie: what intents, proofs and chat states bind to. */
  readonly cookieHash: string;
}

/** A service result plus the flow cookie the response must set when the request started a flow. */
export interface WithFlowCookie<T> {
  readonly body: T;
  readonly newFlowCookie?: { readonly flowId: string; readonly value: string; readonly sameSite: SameSite };
}

/**
 * Sets the flow cookie when the request started a flow. A flow started by CORS from a registered
 * web origin gets `SameSite=None; Partitioned`, so a cross-site page's later calls carry it in
 * that page's partition; any other gets `SameSite=Lax` (contract section 11).
 */
export function sendWithFlowCookie<T>(res: Response, result: WithFlowCookie<T>): T {
  const cookie = result.newFlowCookie;
  if (cookie) {
    setHostCookie(res, flowCookieName(cookie.flowId), cookie.value, BROWSER_FLOW_TTL_SECONDS, cookie.sameSite);
  }
  return result.body;
}

/** A linking intent's answer (contract 6): 201 for a new intent, 200 for a renewed one, with the flow cookie. */
export function sendIntent<T>(res: Response, result: WithFlowCookie<T> & { readonly created: boolean }): T {
  res.status(result.created ? 201 : 200);
  return sendWithFlowCookie(res, result);
}

@Injectable()
export class BrowserFlows {
  constructor(private readonly store: BrowserFlowsStore) {}

  /**
   * Runs `work` inside the request's flow, starting the flow when it is new. Contract section 10:
   * a refused request claims no flow and sets no cookie, so when `work` (or anything after the
   * claim) throws, a flow this request started is given back and a retry with the same
   * `browser_flow_id` starts it afresh. Callers check what can refuse before calling this.
   */
  async within<T>(ctx: GuestRequestContext, work: (flow: BoundFlow) => Promise<T>): Promise<WithFlowCookie<T>> {
    const started = await this.bind(ctx);
    if (!started.claimed) return { body: await work(started.flow) };
    try {
      const body = await work(started.flow);
      return {
        body,
        newFlowCookie: {
          flowId: ctx.flowId,
          value: started.cookie,
          sameSite: ctx.pageOrigin !== undefined ? 'none' : 'lax',
        },
      };
    } catch (err) {
      await this.store.release(ctx.flowId, started.claimed).catch(() => undefined);
      throw err;
    }
  }

  /** Binds only to a flow that exists; used where a flow must already be under way. */
  async requireKnown(ctx: GuestRequestContext): Promise<BoundFlow> {
    const existing = await this.store.find(ctx.flowId);
    if (!existing) throw new AppError('forbidden', 'Unknown browser flow.');
    return check(existing, ctx);
  }

  /** A flow under way must show its cookie; an id no flow holds yet passes (one read either way). */
  async requireKnownIfUnderWay(ctx: GuestRequestContext): Promise<void> {
    const existing = await this.store.find(ctx.flowId);
    if (existing) check(existing, ctx);
  }

  private async bind(
    ctx: GuestRequestContext,
  ): Promise<{ flow: BoundFlow; claimed?: undefined } | { flow: BoundFlow; claimed: FlowRecord; cookie: string }> {
    // A request with a cookie continues a flow; without one it tries to start it. Of two
    // requests racing to start one flow, only one owns it; the other must show its cookie.
    if (ctx.flowCookie === undefined) {
      const cookie = newSecret();
      const record: FlowRecord = { tenantId: ctx.tenantId, cookieHash: sha256(cookie) };
      if (await this.store.claim(ctx.flowId, record, BROWSER_FLOW_TTL_SECONDS)) {
        return { flow: { flowId: ctx.flowId, cookieHash: record.cookieHash }, claimed: record, cookie };
      }
    }
    const existing = await this.store.find(ctx.flowId);
    // A cookie of a flow that has expired (or was given back): start the flow afresh.
    if (!existing) return this.bind({ ...ctx, flowCookie: undefined });
    return { flow: check(existing, ctx) };
  }
}

function check(flow: FlowRecord, ctx: GuestRequestContext): BoundFlow {
  const cookieHash = ctx.flowCookie ? sha256(ctx.flowCookie) : '';
  if (flow.tenantId !== ctx.tenantId || !ctx.flowCookie || !safeEqual(flow.cookieHash, cookieHash)) {
    throw new AppError('forbidden', 'The browser flow cookie is missing or does not belong to this flow.');
  }
  return { flowId: ctx.flowId, cookieHash };
}
