import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { runMigrationsOnce } from '../../platform/database/migrator';
import { ControlPlaneSeedService } from '../../directory/control-plane-seed.service';
import { RetentionRepository } from '../../directory/retention.repository';
import { finishInterruptedErasures } from '../../directory/user-erasure';
import { userRecords } from './user.commands';
import type { AdminCommand } from '../admin-command';
import { clientsRepository, tenantsRepository } from './directory-repositories';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';

const random32 = (): string => randomBytes(32).toString('base64url');

/** Fresh production secrets in the shapes the configuration checks (contract 1, 12). */
export async function generateSecrets(): Promise<Record<string, string>> {
  const stamp = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  const kid = (alg: string): string => `${alg}-${stamp}-${randomBytes(3).toString('hex')}`;
  const rsa = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const ec = await generateKeyPair('ES256', { extractable: true });
  const keys = [
    { ...(await exportJWK(rsa.privateKey)), alg: 'RS256', use: 'sig', kid: kid('rs') },
    { ...(await exportJWK(ec.privateKey)), alg: 'ES256', use: 'sig', kid: kid('es') },
  ];
  return {
    CONSOLE_CLIENT_SECRET: random32(),
    CONSOLE_SESSION_KEY: random32(),
    PRIVACY_KEY: random32(),
    SIGNING_KEYS: JSON.stringify({ keys }),
  };
}

/** NAME=value, single-quoted when the value holds anything a POSIX shell would interpret. */
export function shellLine(name: string, value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]*$/.test(value) ? `${name}=${value}` : `${name}='${value.replace(/'/g, `'\\''`)}'`;
}

export const SETUP_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'migrate',
    usage: 'migrate',
    options: {},
    async run(ctx) {
      return { migrated: await runMigrationsOnce(await ctx.migrationDb()) };
    },
  },
  {
    name: 'seed-control-plane',
    usage: 'seed-control-plane',
    options: {},
    async run(ctx) {
      const seed = new ControlPlaneSeedService(
        ctx.consoleClient(),
        await tenantsRepository(ctx),
        await clientsRepository(ctx),
        ctx.pseudonymizer(),
      );
      const result = await seed.seed();
      await ctx.auditAdmin(this.name, CONTROL_PLANE_TENANT_ID, result.client_id);
      return result;
    },
  },
  {
    name: 'generate-secrets',
    usage:
      'generate-secrets [--env-file]    (NAME=value lines, shell-quoted; --env-file: unquoted for docker --env-file)',
    options: { 'env-file': { type: 'boolean' } },
    async run(_ctx, v) {
      const secrets = await generateSecrets();
      // docker run --env-file keeps quotes as part of the value, so that format has none.
      return Object.entries(secrets)
        .map(([k, value]) => (v['env-file'] === true ? `${k}=${value}` : shellLine(k, value)))
        .join('\n');
    },
  },
  {
    name: 'purge',
    usage:
      'purge                            (expired sessions, stale provisional users, old audit rows, abandoned guests, interrupted erasures)',
    options: {},
    async run(ctx) {
      const policy = { auditRetentionDays: ctx.auditRetentionDays(), guestRetentionDays: ctx.guestRetentionDays() };
      const retained = await new RetentionRepository(await ctx.db()).purge(policy);
      const record = (erased: number) =>
        ctx.auditAdmin(this.name, CONTROL_PLANE_TENANT_ID, 'retention', {
          ...retained,
          erased_users: erased,
          audit_retention_days: policy.auditRetentionDays,
          guest_retention_days: policy.guestRetentionDays,
        });
      // After retention, which an unreachable Redis must not hold up: only these need Redis.
      let erased: number;
      try {
        erased = await finishInterruptedErasures(
          await userRecords(ctx),
          () => ctx.sessions(),
          (tenantId, userId) => [ctx.adminRecord(this.name, tenantId, userId, { finished: 'user.delete' })],
        );
      } catch (err) {
        await record(0);
        throw err;
      }
      await record(erased);
      return { purged: { ...retained, erased_users: erased } };
    },
  },
];
