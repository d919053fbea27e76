import { hkdfSync } from 'node:crypto';
import { Pseudonymizer, safeEqual, sha256 } from '../crypto/digests';
import { newSecret } from '../crypto/ids';

/**
 * The refresh-token formats, newest first (contract 13: a refresh token proves a random secret
 * held by its session):
 *
 *   `<sid>.<gen>.<secret>.<mac>`  the secret is 32 random bytes made when the session began; the
 *                                 store keeps only its digest. The MAC (privacy key) binds the
 *                                 generation, so an old token's holder cannot name a newer one.
 *   `<sid>.<gen>.<mac>`           the release before: a MAC of public ids under the privacy key,
 *                                 which whoever holds that key could make. Accepted once, to move
 *                                 the session to a secret (nobody is signed out by the deploy).
 *   `<sid>.<secret>`              the release before generations; moved likewise.
 */
export type ParsedRefreshToken =
  | {
      readonly format: 'secret';
      readonly sessionId: string;
      readonly generation: number;
      readonly secret: string;
      readonly secretDigest: string;
    }
  | { readonly format: 'generation'; readonly sessionId: string; readonly generation: number }
  | { readonly format: 'digest'; readonly sessionId: string; readonly secretDigest: string };

/** A session's random secret, and the digest that the store (and a customer session's row) keeps of it. */
export interface SessionSecret {
  readonly secret: string;
  readonly digest: string;
}

const SECRET_DOMAIN = 'svc:refresh-token:secret';
const GENERATION_DOMAIN = 'svc:refresh-token';
const SUCCESSOR_DOMAIN = 'svc:refresh-token:successor';

const SECRET_FORMAT = /^(ses_[A-Za-z0-9_-]{16,64})\.(0|[1-9]\d{0,8})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;
const GENERATION_FORMAT = /^(ses_[A-Za-z0-9_-]{16,64})\.(0|[1-9]\d{0,8})\.([A-Za-z0-9_-]{43})$/;
const DIGEST_FORMAT = /^(ses_[A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{43})$/;

export class RefreshTokens {
  constructor(private readonly macs: Pseudonymizer) {}

  /** A fresh session secret and the digest the store keeps of it. */
  newSecret(): SessionSecret {
    const secret = newSecret();
    return { secret, digest: sha256(secret) };
  }

  /**
   * The secret an upgrade's replacement session takes when the upgrade's answer was lost and the
   * replaced session's token comes back instead (session-store.ts, `successor`): derived from that
   * token's secret, so every retry gets the same token and only the holder of the secret can ask,
   * and from the random salt the upgrade noted, so the guest's older tokens, which carry the same
   * secret, make nothing once the note has expired.
   */
  successorSecret(secret: string, salt: string, successorId: string): { secret: string; digest: string } {
    const derived = Buffer.from(hkdfSync('sha256', secret, salt, `${SUCCESSOR_DOMAIN}:${successorId}`, 32)).toString(
      'base64url',
    );
    return { secret: derived, digest: sha256(derived) };
  }

  make(sessionId: string, generation: number, secret: string): string {
    const body = `${sessionId}.${generation}.${secret}`;
    return `${body}.${this.macs.mac(SECRET_DOMAIN, body)}`;
  }

  /**
   * What a token claims, when its MAC holds under one of the privacy keys (contract 12: a key
   * rotation signs nobody out); null for anything this service did not issue. The MAC is checked
   * before Redis is asked, so nobody who merely knows a session id can forge an "old" token to
   * revoke it.
   */
  parse(token: string): ParsedRefreshToken | null {
    const s = SECRET_FORMAT.exec(token);
    if (s?.[1] && s[2] && s[3] && s[4]) {
      const body = `${s[1]}.${s[2]}.${s[3]}`;
      if (!this.genuine(s[4], this.macs.macs(SECRET_DOMAIN, body))) return null;
      return {
        format: 'secret',
        sessionId: s[1],
        generation: Number(s[2]),
        secret: s[3],
        secretDigest: sha256(s[3]),
      };
    }
    const g = GENERATION_FORMAT.exec(token);
    if (g?.[1] && g[2] && g[3]) {
      const generation = Number(g[2]);
      if (!this.genuine(g[3], this.macs.macs(GENERATION_DOMAIN, `${g[1]}.${generation}`))) return null;
      return { format: 'generation', sessionId: g[1], generation };
    }
    const d = DIGEST_FORMAT.exec(token);
    // The store compares the digest: this format carried no MAC.
    if (d?.[1] && d[2]) return { format: 'digest', sessionId: d[1], secretDigest: sha256(d[2]) };
    return null;
  }

  /** Every candidate is compared, so timing does not tell which key matched. */
  private genuine(mac: string, candidates: readonly string[]): boolean {
    return candidates.reduce((found, candidate) => safeEqual(mac, candidate) || found, false);
  }
}
