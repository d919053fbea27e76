import { Injectable } from '@nestjs/common';
import { safeEqual, sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { isString, objectDecoder } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';
import { newRecordId } from '../directory/identifiers';

export const CONTROL_FLOW_COOKIE = '__Host-svc_control_flow';
export const CONTROL_FLOW_TTL_SECONDS = 3600;

/** A validated authorize request waiting for the email code (spec 2.3). */
export interface ControlFlow {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string;
  readonly codeChallenge: string;
  readonly scope: string;
  /** sha256 of the flow cookie's value: the cookie itself is a bearer secret. */
  readonly cookieHash: string;
}

const decodeControlFlow = objectDecoder<ControlFlow>({
  clientId: isString,
  redirectUri: isString,
  state: isString,
  codeChallenge: isString,
  scope: isString,
  cookieHash: isString,
});

const key = (flowId: string): string => `cf:{${flowId}}`;

@Injectable()
export class ControlFlowsStore {
  constructor(private readonly store: OneTimeStore) {}

  async create(flow: Omit<ControlFlow, 'cookieHash'>): Promise<{ flowId: string; cookie: string }> {
    const flowId = newRecordId('flow');
    const cookie = newSecret();
    await this.store.put(
      key(flowId),
      { ...flow, cookieHash: sha256(cookie) } satisfies ControlFlow,
      CONTROL_FLOW_TTL_SECONDS,
    );
    return { flowId, cookie };
  }

  /** The flow, only when the presented cookie is the one bound to it. */
  async getBound(flowId: string, cookie: string | undefined): Promise<ControlFlow | null> {
    if (!cookie) return null;
    const flow = await this.store.get(key(flowId), decodeControlFlow);
    return flow && safeEqual(flow.cookieHash, sha256(cookie)) ? flow : null;
  }

  /** Ends the flow once it produced an authorization code, so it yields at most one. */
  async finish(flowId: string): Promise<boolean> {
    return this.store.destroy(key(flowId));
  }
}
