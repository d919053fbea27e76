import { Inject, Injectable } from '@nestjs/common';
import {
  arrayReply,
  decodeJson,
  isBoolean,
  isNumber,
  isString,
  nullable,
  objectDecoder,
  oneOf,
} from '../platform/redis/decode';
import { REDIS } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { RedisScript } from '../platform/redis/redis-script';
import { newRecordId } from '../directory/identifiers';
import { BROWSER_FLOW_TTL_SECONDS } from './browser-flows';

/**
 * One-time records of a browser flow: provider proofs, the upgrade proof of a new guest and the
 * linking intent (spec 2.4). All keys of a flow share the `{flw_…}` hash tag, so the upgrade can
 * check and consume an intent and a proof in one atomic script, also on Redis Cluster.
 */
export interface ProviderProof {
  readonly kind: 'provider';
  readonly tenantId: string;
  readonly clientId: string;
  readonly cookieHash: string;
  readonly userId: string;
  readonly identityId: string;
  /** `email`, `chat_platform` or the id of an OpenID Connect provider of the tenant (contract 14). */
  readonly provider: string;
  readonly providerSubject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
}

export interface UpgradeProof {
  readonly kind: 'upgrade';
  readonly tenantId: string;
  readonly clientId: string;
  readonly cookieHash: string;
  readonly userId: string;
  readonly sessionId: string;
}

export interface LinkingIntent {
  readonly intentId: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly sessionId: string;
  readonly cookieHash: string;
  /** Database clock, ms: provisional users must be created after it (spec 4.3 rule 6). */
  readonly createdAt: number;
}

export interface Binding {
  readonly tenantId: string;
  readonly clientId: string;
  readonly cookieHash: string;
}

const decodeProviderProof = objectDecoder<ProviderProof>({
  kind: oneOf('provider'),
  tenantId: isString,
  clientId: isString,
  cookieHash: isString,
  userId: isString,
  identityId: isString,
  provider: isString,
  providerSubject: isString,
  email: nullable(isString),
  emailVerified: isBoolean,
});

const decodeLinkingIntent = objectDecoder<LinkingIntent>({
  intentId: isString,
  tenantId: isString,
  clientId: isString,
  userId: isString,
  sessionId: isString,
  cookieHash: isString,
  createdAt: isNumber,
});

const proofKey = (flowId: string, proofId: string): string => `g:{${flowId}}:prf:${proofId}`;
const intentKey = (flowId: string): string => `g:{${flowId}}:intent`;
const firstIntentKey = (flowId: string): string => `g:{${flowId}}:intent:first`;

const BOUND = `
local function bound(r)
  return r.tenantId == ARGV[1] and r.clientId == ARGV[2] and r.cookieHash == ARGV[3]
end`;

// Consumes a proof only when it is of the expected kind and bound to tenant, client and flow
// cookie (and, for an upgrade proof, to the guest's user and session). Answers the proof and the
// milliseconds it had left, so a sign-in a dependency refused can put it back (RESTORE_PROOF).
const CONSUME_PROOF = new RedisScript(`${BOUND}
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local p = cjson.decode(raw)
if p.kind ~= ARGV[4] or not bound(p) then return false end
if ARGV[4] == 'upgrade' and (p.userId ~= ARGV[5] or p.sessionId ~= ARGV[6]) then return false end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
return {raw, ttl}`);

// An unspent provider proof bound to tenant, client and flow cookie: the seconds it has left.
const PROOF_LEFT = new RedisScript(`${BOUND}
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local p = cjson.decode(raw)
if p.kind ~= 'provider' or not bound(p) then return 0 end
return math.floor(redis.call('PTTL', KEYS[1]) / 1000)`);

// One live intent per flow: the same session, client and tenant renew it; anyone else conflicts.
// A new intent of the session whose earlier intent in this flow lapsed keeps that one's creation
// time: the provisional user the lapsed attempt's proof made is then still younger than the intent
// (spec 4.3 rule 6), so a player slow to read the code can start over instead of finding the address
// taken by an empty account. KEYS[2] keeps the flow's first intent as `{sessionId} {createdAt}` (a
// session is of one tenant and client, and the flow's cookie is checked before), for the flow's life.
const PUT_INTENT = new RedisScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local c = cjson.decode(cur)
  if c.sessionId == ARGV[2] and c.clientId == ARGV[3] and c.tenantId == ARGV[4] and c.cookieHash == ARGV[5] then
    redis.call('EXPIRE', KEYS[1], ARGV[6])
    return {'renewed', cur}
  end
  return {'conflict'}
end
local raw = ARGV[1]
local sid, at = string.match(redis.call('GET', KEYS[2]) or '', '^(%S+) (%d+)$')
if sid == ARGV[2] then
  local fresh = cjson.decode(raw)
  fresh.createdAt = tonumber(at)
  raw = cjson.encode(fresh)
else
  at = ARGV[8]
end
redis.call('SET', KEYS[1], raw, 'EX', ARGV[6])
redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. at, 'EX', ARGV[7])
return {'created', raw}`);

// Spec 4.3 rule 2: the intent and the provider proof are consumed together, once, and only when
// both are fresh and bound to the same tenant, client, flow and guest session.
const CONSUME_FOR_UPGRADE = new RedisScript(`${BOUND}
local i = redis.call('GET', KEYS[1])
local p = redis.call('GET', KEYS[2])
if not i or not p then return false end
local ci = cjson.decode(i)
local cp = cjson.decode(p)
if cp.kind ~= 'provider' or not bound(ci) or not bound(cp) or ci.sessionId ~= ARGV[4] or ci.userId ~= ARGV[5] then return false end
local ttl = redis.call('PTTL', KEYS[2])
local ittl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
return {i, p, ttl, ittl}`);

// Contract 13: a proof refused with 409 identity_in_use goes back as it was, for the rest of its
// lifetime, so the player can sign in to the account that owns the credential without a new code;
// so does one whose sign-in a dependency refused (503), so the retry signs in, and an upgrade
// proof whose linking intent was refused with 409 intent_conflict (a refusal spends nothing).
const RESTORE_PROOF = new RedisScript(`
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') and 1 or 0`);

// Contract 13: a link that PostgreSQL refused (503) spent nothing, so the intent goes back with the
// proof, each for the rest of its lifetime; an intent put on the flow meanwhile is left alone.
const RESTORE_INTENT_AND_PROOF = new RedisScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4], 'NX')
return 1`);

@Injectable()
export class FlowRecordsStore {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async putProof(flowId: string, proof: ProviderProof | UpgradeProof, ttlSeconds: number): Promise<string> {
    const proofId = newRecordId('proof');
    await this.redis.set(proofKey(flowId, proofId), JSON.stringify(proof), 'EX', ttlSeconds);
    return proofId;
  }

  /** Seconds an unspent provider proof bound to `b` has left; 0 when it is spent, gone or not bound to `b`. */
  async providerProofLeft(flowId: string, proofId: string, b: Binding): Promise<number> {
    const left = await PROOF_LEFT.run(this.redis, [proofKey(flowId, proofId)], [b.tenantId, b.clientId, b.cookieHash]);
    return typeof left === 'number' ? left : 0;
  }

  /** The proof, spent, and how to put it back for the rest of its lifetime; null when refused. */
  async consumeProviderProof(
    flowId: string,
    proofId: string,
    b: Binding,
  ): Promise<{ proof: ProviderProof; restore: () => Promise<void> } | null> {
    const spent = await this.consumeProof(flowId, proofId, [b.tenantId, b.clientId, b.cookieHash, 'provider']);
    const proof = spent && decodeJson(spent.raw, decodeProviderProof);
    return spent && proof ? { proof, restore: spent.restore } : null;
  }

  /** The upgrade proof, spent: how to put it back for the rest of its lifetime; null when refused. */
  async consumeUpgradeProof(
    flowId: string,
    proofId: string,
    b: Binding,
    userId: string,
    sessionId: string,
  ): Promise<{ restore: () => Promise<void> } | null> {
    const spent = await this.consumeProof(flowId, proofId, [
      b.tenantId,
      b.clientId,
      b.cookieHash,
      'upgrade',
      userId,
      sessionId,
    ]);
    return spent && { restore: spent.restore };
  }

  /** CONSUME_PROOF, and how to put the proof back as it was for the rest of its lifetime. */
  private async consumeProof(
    flowId: string,
    proofId: string,
    args: readonly string[],
  ): Promise<{ raw: string; restore: () => Promise<void> } | null> {
    const key = proofKey(flowId, proofId);
    const [raw, ttlMs] = arrayReply(await CONSUME_PROOF.run(this.redis, [key], [...args]));
    if (typeof raw !== 'string' || typeof ttlMs !== 'number') return null;
    const restore = async (): Promise<void> => {
      if (ttlMs > 0) await RESTORE_PROOF.run(this.redis, [key], [raw, ttlMs]);
    };
    return { raw, restore };
  }

  async putIntent(
    flowId: string,
    intent: Omit<LinkingIntent, 'intentId'>,
    ttlSeconds: number,
  ): Promise<{ outcome: 'created' | 'renewed'; intent: LinkingIntent } | { outcome: 'conflict' }> {
    const fresh: LinkingIntent = { intentId: newRecordId('linkingIntent'), ...intent };
    const reply = await PUT_INTENT.run(
      this.redis,
      [intentKey(flowId), firstIntentKey(flowId)],
      [
        JSON.stringify(fresh),
        intent.sessionId,
        intent.clientId,
        intent.tenantId,
        intent.cookieHash,
        ttlSeconds,
        BROWSER_FLOW_TTL_SECONDS,
        String(intent.createdAt),
      ],
    );
    const [outcome, raw] = arrayReply(reply);
    const stored = outcome === 'created' || outcome === 'renewed' ? decodeJson(raw, decodeLinkingIntent) : null;
    // A live intent this release cannot read is another's as far as this request can tell.
    return stored && (outcome === 'created' || outcome === 'renewed')
      ? { outcome, intent: stored }
      : { outcome: 'conflict' };
  }

  async consumeForUpgrade(
    flowId: string,
    proofId: string,
    b: Binding,
    sessionId: string,
    userId: string,
  ): Promise<{
    intent: LinkingIntent;
    proof: ProviderProof;
    restoreProof: () => Promise<void>;
    restoreIntentAndProof: () => Promise<void>;
  } | null> {
    const reply = await CONSUME_FOR_UPGRADE.run(
      this.redis,
      [intentKey(flowId), proofKey(flowId, proofId)],
      [b.tenantId, b.clientId, b.cookieHash, sessionId, userId],
    );
    const [rawIntent, rawProof, ttlMs, intentTtlMs] = arrayReply(reply);
    const intent = decodeJson(rawIntent, decodeLinkingIntent);
    const proof = decodeJson(rawProof, decodeProviderProof);
    if (
      !intent ||
      !proof ||
      typeof rawIntent !== 'string' ||
      typeof rawProof !== 'string' ||
      typeof ttlMs !== 'number' ||
      typeof intentTtlMs !== 'number'
    )
      return null;
    const restoreProof = async (): Promise<void> => {
      if (ttlMs > 0) await RESTORE_PROOF.run(this.redis, [proofKey(flowId, proofId)], [rawProof, ttlMs]);
    };
    const restoreIntentAndProof = async (): Promise<void> => {
      if (ttlMs > 0 && intentTtlMs > 0)
        await RESTORE_INTENT_AND_PROOF.run(
          this.redis,
          [intentKey(flowId), proofKey(flowId, proofId)],
          [rawIntent, intentTtlMs, rawProof, ttlMs],
        );
    };
    return { intent, proof, restoreProof, restoreIntentAndProof };
  }
}
