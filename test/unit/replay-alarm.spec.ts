import { Logger } from '@nestjs/common';
import type { AuditRecord } from '../../src/directory/audit-trail.repository';
import { ReplayAlarm } from '../../src/directory/replay-alarm';
import type { SessionRecordsRepository } from '../../src/directory/session-records.repository';
import type { AppConfig } from '../../src/config/config';
import { MetricsService } from '../../src/platform/metrics/metrics.service';

describe('ReplayAlarm: warn, count and record a replay as a revocation, the same wherever it is detected', () => {
  const rows: AuditRecord[] = [];
  const revoked: string[] = [];
  const sessions = {
    recordRevocation: (_tenantId: string, sessionId: string, records: readonly AuditRecord[]) => {
      revoked.push(sessionId);
      rows.push(...records);
      return Promise.resolve();
    },
  } as unknown as SessionRecordsRepository;
  const metrics = new MetricsService({} as AppConfig);
  const alarm = new ReplayAlarm(metrics, sessions);
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  const count = async (realm: string, kind: string): Promise<number> =>
    (await metrics.refreshReplays.get()).values.find((v) => v.labels.realm === realm && v.labels.kind === kind)
      ?.value ?? 0;

  afterAll(() => warn.mockRestore());

  it.each([
    {
      name: 'a customer refresh-token replay: the audit row names the client',
      replay: {
        realm: 'customer',
        kind: 'refresh_token',
        tenantId: 'acme',
        sessionId: 'ses_1',
        subject: 'usr_1',
        clientId: 'cli_a',
      },
      message: 'refresh token replayed; session revoked',
      data: { kind: 'refresh_token', session_id: 'ses_1', client_id: 'cli_a' },
    },
    {
      name: 'a control-plane authorization-code replay: no client in the row',
      replay: {
        realm: 'control_plane',
        kind: 'authorization_code',
        tenantId: 'control-plane',
        sessionId: 'ses_2',
        subject: 'ses_2',
      },
      message: 'authorization code replayed; session revoked',
      data: { kind: 'authorization_code', session_id: 'ses_2' },
    },
  ] as const)('$name', async ({ replay, message, data }) => {
    await alarm.raise(replay);
    expect(revoked.at(-1)).toBe(replay.sessionId);
    expect(warn).toHaveBeenLastCalledWith(
      { realm: replay.realm, tenant: replay.tenantId, sid: replay.sessionId },
      message,
    );
    expect(await count(replay.realm, replay.kind)).toBe(1);
    expect(rows.at(-1)).toEqual({ type: 'refresh.replayed', tenantId: replay.tenantId, subject: replay.subject, data });
  });
});
