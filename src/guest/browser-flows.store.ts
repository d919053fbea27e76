import { Injectable } from '@nestjs/common';
import { isString, objectDecoder } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';

/** A browser flow as stored: its tenant and the sha256 of its cookie, never the cookie. */
export interface FlowRecord {
  readonly tenantId: string;
  readonly cookieHash: string;
}

const decodeFlowRecord = objectDecoder<FlowRecord>({ tenantId: isString, cookieHash: isString });

const key = (flowId: string): string => `gf:{${flowId}}`;

/** Persistence of browser flows (spec 2.4); the rules live in `browser-flows.ts`. */
@Injectable()
export class BrowserFlowsStore {
  constructor(private readonly store: OneTimeStore) {}

  /** SET NX: of two requests racing to start one flow, only one owns it. */
  claim(flowId: string, flow: FlowRecord, ttlSeconds: number): Promise<boolean> {
    return this.store.putIfAbsent(key(flowId), flow, ttlSeconds);
  }

  find(flowId: string): Promise<FlowRecord | null> {
    return this.store.get(key(flowId), decodeFlowRecord);
  }

  /** Gives a claimed flow back, only while it is still the one this request claimed. */
  async release(flowId: string, flow: FlowRecord): Promise<void> {
    await this.store.destroyIfEqual(key(flowId), { tenantId: flow.tenantId, cookieHash: flow.cookieHash });
  }
}
