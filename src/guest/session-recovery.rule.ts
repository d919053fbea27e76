import type { RecoverableRow } from '../directory/session-records.repository';
import { safeEqual } from '../platform/crypto/digests';
import type { LostSession } from '../platform/session-store/session-store';

/**
 * Why a session Redis lost is not rebuilt from its row:
 * - `no_row`: the row refuses it by itself (none of this realm and client, revoked, past its end,
 *   its user no longer active, or written before rows kept a secret's digest);
 * - `secret`: the token's secret is not the session's (a token can only be genuine by its MAC);
 * - `generation`: an older token than one already presented, rotated away and possibly stolen;
 * - `active_in_dataset`: the session was active since Redis's current dataset began, so it was
 *   live there and its absence means it ended; Redis did not lose it.
 */
export type RecoveryRefusal = 'no_row' | 'secret' | 'generation' | 'active_in_dataset';

/**
 * Whether a customer session Redis holds nothing of may be rebuilt from its row (docs/security.md,
 * "Sessions rebuilt after Redis lost them"): null when it may, else why not. The token has already
 * proven its MAC, and Redis has neither the session nor a tombstone under its id. `epochMs` is when
 * Redis's current dataset began (DatasetEpoch).
 */
export function recoveryRefusal(
  row: RecoverableRow | null,
  lost: LostSession,
  epochMs: number,
): RecoveryRefusal | null {
  if (!row) return 'no_row';
  if (!safeEqual(row.secretDigest, lost.secretDigest)) return 'secret';
  // The row's generation already counts this refresh's, so "not older than any presented" reads so.
  if (lost.generation < row.presentedGeneration) return 'generation';
  // Activity before this generation was first presented: every refresh slides the row before it
  // asks Redis, so the row's latest activity is this refresh's own, or a concurrent retry's.
  if (row.priorActivityMs >= epochMs) return 'active_in_dataset';
  return null;
}
