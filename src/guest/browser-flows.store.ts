import { Injectable } from '@nestjs/common';
import { AppError } from '../errors/app-error';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { OneTimeStore } from '../platform/redis/one-time-store';

/** Flow cookies live at most one hour (contract section 8). */
export const BROWSER_FLOW_TTL_SECONDS = 3600;

export const flowCookieName = (flowId: string): string => `__Host-svc_flow_${flowId}`;

interface FlowRecord {
  readonly tenantId: string;
  readonly cookieHash: string;
}

export interface BoundFlow {
  readonly flowId: string;
  /** sha256 of the flow cookie: what intents and proofs bind to. */
  readonly cookieHash: string;
  /** Set when this request started the flow: the cookie the response must carry. */
  readonly newCookie?: string;
}

const key = (flowId: string): string => `gf:{${flowId}}`;

/**
 * Browser flows of a tenant (spec 2.4, contract 6): a `browser_flow_id` never seen before starts
 * a flow and gets a secret cookie, stored only as a hash; a known flow must present its cookie.
 */
@Injectable()
export class BrowserFlowsStore {
  constructor(private readonly store: OneTimeStore) {}

  /** Binds the request to its flow, starting the flow when it is new. */
  async bind(tenantId: string, flowId: string, cookie: string | undefined): Promise<BoundFlow> {
    // A request with a cookie continues a flow; without one it tries to start it. SET NX: of two
    // requests racing to start one flow, only one owns it; the other must show its cookie.
    if (cookie === undefined) {
      const fresh = newSecret();
      const cookieHash = sha256(fresh);
      if (
        await this.store.putIfAbsent(
          key(flowId),
          { tenantId, cookieHash } satisfies FlowRecord,
          BROWSER_FLOW_TTL_SECONDS,
        )
      ) {
        return { flowId, cookieHash, newCookie: fresh };
      }
    }
    const existing = await this.store.get<FlowRecord>(key(flowId));
    if (!existing) {
      // A cookie of a flow that has expired: start the flow afresh.
      return this.bind(tenantId, flowId, undefined);
    }
    return this.check(existing, tenantId, flowId, cookie);
  }

  /** Binds only to a flow that exists; used where a flow must already be under way. */
  async requireKnown(tenantId: string, flowId: string, cookie: string | undefined): Promise<BoundFlow> {
    const existing = await this.store.get<FlowRecord>(key(flowId));
    if (!existing) throw new AppError('forbidden', 'Unknown browser flow.');
    return this.check(existing, tenantId, flowId, cookie);
  }

  private check(flow: FlowRecord, tenantId: string, flowId: string, cookie: string | undefined): BoundFlow {
    const cookieHash = cookie ? sha256(cookie) : '';
    if (flow.tenantId !== tenantId || !cookie || !safeEqual(flow.cookieHash, cookieHash)) {
      throw new AppError('forbidden', 'The browser flow cookie is missing or does not belong to this flow.');
    }
    return { flowId, cookieHash };
  }
}
