import type { RecoverableRow } from '../../src/directory/session-records.repository';
import { recoveryRefusal } from '../../src/guest/session-recovery.rule';
import { sha256 } from '../../src/platform/crypto/digests';
import type { LostSession } from '../../src/platform/session-store/session-store';

const EPOCH = 1_800_000_000_000;
const row: RecoverableRow = {
  userId: 'usr_1',
  secretDigest: sha256('the session secret'),
  scope: 'openid offline_access',
  guest: true,
  presentedGeneration: 4,
  priorActivityMs: EPOCH - 1,
  neverRefreshed: false,
  expiresAtMs: EPOCH + 86_400_000,
};
const lost: LostSession = {
  tenantId: 'acme',
  clientId: 'cli_game',
  sessionId: 'ses_0123456789abcdef',
  generation: 4,
  secretDigest: sha256('the session secret'),
  userId: 'usr_1',
  expiresAtMs: EPOCH + 90 * 86_400_000,
};

describe('a session Redis lost is rebuilt from its row only when that is safe', () => {
  it('rebuilds for the newest token of a session last active before the dataset began', () => {
    expect(recoveryRefusal(row, lost, EPOCH)).toBeNull();
  });

  it('rebuilds for a token newer than any presented (its rotation was answered, then lost)', () => {
    expect(recoveryRefusal({ ...row, presentedGeneration: 5 }, { ...lost, generation: 5 }, EPOCH)).toBeNull();
  });

  it.each<[string, RecoverableRow | null, Partial<LostSession>, string]>([
    ['no live row of this realm and client, or its user inactive', null, {}, 'no_row'],
    ['another secret (made from configuration)', row, { secretDigest: sha256('another secret') }, 'secret'],
    ['a token older than one already presented', row, { generation: 3 }, 'generation'],
    ['activity at the epoch', { ...row, priorActivityMs: EPOCH }, {}, 'active_in_dataset'],
    ['activity since the epoch', { ...row, priorActivityMs: EPOCH + 1 }, {}, 'active_in_dataset'],
  ])('refuses %s', (_, r, claim, refusal) => {
    expect(recoveryRefusal(r, { ...lost, ...claim }, EPOCH)).toBe(refusal);
  });
});
