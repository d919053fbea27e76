import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { objectDecoder } from '../../../src/platform/redis/decode';
import { OneTimeStore } from '../../../src/platform/redis/one-time-store';
import {
  BINDING_FIELDS,
  SIGN_IN_HANDLE_FIELDS,
  SIGN_IN_STATE_TTL_SECONDS,
  SignInStates,
  type BoundSignInState,
  type SignInHandle,
} from '../../../src/guest/sign-in-states.store';
import { REDIS_URL } from '../../support/test-app';

/**
 * The one-time records of a redirect sign-in (sign-in-states.store.ts) on a real Redis: each handle
 * and state is spent once however many requests race for it, lives ten minutes, and only its
 * digest reaches Redis.
 */
describe('sign-in states', () => {
  const prefix = `sis${randomBytes(3).toString('hex')}:`;
  let redis: Redis;
  let states: SignInStates<SignInHandle, BoundSignInState>;
  const handle: SignInHandle = { tenantId: 'acme', clientId: 'cli_game', flowId: 'flw_states', cookieHash: 'h1' };

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { keyPrefix: prefix });
    states = new SignInStates(
      new OneTimeStore(redis),
      'gt',
      objectDecoder<SignInHandle>(SIGN_IN_HANDLE_FIELDS),
      objectDecoder<BoundSignInState>({ ...SIGN_IN_HANDLE_FIELDS, ...BINDING_FIELDS }),
    );
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.unlink(...keys.map((k) => k.slice(prefix.length)));
    redis.disconnect();
  });

  it('gives a handle back once, and never another kind of record for it', async () => {
    const h = await states.newHandle(handle);
    expect(await states.takeState(h)).toBeNull();
    expect(await states.takeHandle(h)).toEqual(handle);
    expect(await states.takeHandle(h)).toBeNull();
  });

  it('spends a state once under concurrent callbacks', async () => {
    const state = await states.newState({ ...handle, bindingId: 'bnd_1', bindingHash: 'b1' });
    const taken = await Promise.all(Array.from({ length: 20 }, () => states.takeState(state)));
    expect(taken.filter((t) => t !== null)).toEqual([{ ...handle, bindingId: 'bnd_1', bindingHash: 'b1' }]);
  });

  it('keeps only a digest of the secret, for ten minutes', async () => {
    const state = await states.newState(handle);
    const keys = await redis.keys(`${prefix}gts:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).not.toContain(state);
    const ttls = await Promise.all(keys.map((k) => redis.ttl(k.slice(prefix.length))));
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(SIGN_IN_STATE_TTL_SECONDS - 10);
    for (const ttl of ttls) expect(ttl).toBeLessThanOrEqual(SIGN_IN_STATE_TTL_SECONDS);
    expect(await states.takeState(state)).toEqual(handle);
  });

  it('finds nothing for a secret it never minted', async () => {
    expect(await states.takeHandle(randomBytes(32).toString('base64url'))).toBeNull();
    expect(await states.takeState('')).toBeNull();
  });
});
