import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { IdentityEmailDigest } from '../../directory/identity-email-digest';
import { IdentityRedigest } from '../../directory/identity-redigest';
import { AdminInputError, optional, type AdminCommand } from '../admin-command';

const DEFAULT_BATCH = 500;

function batchSize(value: string | undefined): number {
  if (value === undefined) return DEFAULT_BATCH;
  if (!/^[1-9][0-9]{0,4}$/.test(value)) throw new AdminInputError('--batch must be a whole number from 1 to 99999');
  return Number(value);
}

export const IDENTITY_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'identity redigest',
    usage:
      'identity redigest [--batch N]       (after upgrading, and after a PRIVACY_KEY rotation: digest addresses under the first key)',
    options: { batch: { type: 'string' } },
    async run(ctx, v) {
      const size = batchSize(optional(v, 'batch'));
      // Asked for at once: a run that found nothing to digest must still prove it holds the key.
      const keys = ctx.pseudonymizer();
      const result = await new IdentityRedigest(await ctx.db(), new IdentityEmailDigest(() => keys)).run(size);
      await ctx.auditAdmin(this.name, CONTROL_PLANE_TENANT_ID, 'identities', { ...result });
      return result;
    },
  },
];
