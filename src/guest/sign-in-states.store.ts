import { sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { isString, optional, type Decoder } from '../platform/redis/decode';
import { OneTimeStore } from '../platform/redis/one-time-store';
import type { BoundState } from './browser-binding';

/** A state, a bounce handle and a bounce cookie all live ten minutes: one sign-in at the platform or provider. */
export const SIGN_IN_STATE_TTL_SECONDS = 600;

/** What every handle names: the tenant, the client and the browser flow it belongs to. */
export interface SignInHandle {
  readonly tenantId: string;
  readonly clientId: string;
  readonly flowId: string;
  readonly cookieHash: string;
  /**
   * The registered web origin of the page that started the flow by `POST …/start`: the callback
   * returns to the client's redirect URI of that origin (a client may have several).
   */
  readonly pageOrigin?: string | undefined;
}

export const SIGN_IN_HANDLE_FIELDS = {
  tenantId: isString,
  clientId: isString,
  flowId: isString,
  cookieHash: isString,
  pageOrigin: optional(isString),
};

/**
 * A state's binding to the browser: set when a page started the flow by `POST …/start` and a
 * browser followed its `authorize_url` through the bounce; the callback then requires the bounce's
 * cookie instead of the flow cookie (browser-binding.ts).
 */
export const BINDING_FIELDS = { bindingId: optional(isString), bindingHash: optional(isString) };

/** What every state keeps: the handle's fields and the binding; each flow adds its own checks. */
export type BoundSignInState = SignInHandle & BoundState;

/**
 * The one-time records of a redirect sign-in (the chat platform, contract 6; OpenID Connect
 * providers, contract 14), each flow kind under its own key prefix:
 * - the handle of `POST …/start`, spent by the bounce (`GET …/go`) that a page's `authorize_url`
 *   points to (issue 22, finding 2);
 * - the state sent to the platform or provider, spent by the callback, bound to the flow and, after
 *   a bounce, to the bounce's cookie (browser-binding.ts).
 * Both are random secrets the store mints, kept only as sha256 under the key, and taken with an
 * atomic get-and-delete, so each is used once however many requests race for it.
 */
export class SignInStates<H extends SignInHandle, S extends H & BoundState> {
  constructor(
    private readonly store: OneTimeStore,
    /** `gc` for the chat platform, `gp` for providers: keys `<prefix>h:{…}` and `<prefix>s:{…}`. */
    private readonly prefix: string,
    private readonly decodeHandle: Decoder<H>,
    private readonly decodeState: Decoder<S>,
  ) {}

  /** Stores the handle's record and returns the handle. */
  async newHandle(record: H): Promise<string> {
    const handle = newSecret();
    await this.store.put(this.key('h', handle), record, SIGN_IN_STATE_TTL_SECONDS);
    return handle;
  }

  /** The handle's record, spent; null when unknown, used or expired. */
  takeHandle(handle: string): Promise<H | null> {
    return this.store.consume(this.key('h', handle), this.decodeHandle);
  }

  /** Stores the state's record and returns the state. */
  async newState(record: S): Promise<string> {
    const state = newSecret();
    await this.store.put(this.key('s', state), record, SIGN_IN_STATE_TTL_SECONDS);
    return state;
  }

  /** The state's record, spent; null when unknown, used or expired. */
  takeState(state: string): Promise<S | null> {
    return this.store.consume(this.key('s', state), this.decodeState);
  }

  private key(kind: 'h' | 's', secret: string): string {
    return `${this.prefix}${kind}:{${sha256(secret)}}`;
  }
}
