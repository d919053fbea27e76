import { parseArgs } from 'node:util';
import { ConfigError } from '../config/config';
import { AdminInputError, type AdminCommand } from './admin-command';
import { CliContext } from './cli-context';
import { CHAT_COMMANDS } from './commands/chat.commands';
import { CLIENT_COMMANDS } from './commands/client.commands';
import { IDENTITY_COMMANDS } from './commands/identity.commands';
import { MEMBERSHIP_COMMANDS } from './commands/membership.commands';
import { PROVIDER_COMMANDS } from './commands/provider.commands';
import { SESSION_COMMANDS } from './commands/session.commands';
import { SETUP_COMMANDS } from './commands/setup.commands';
import { TENANT_COMMANDS } from './commands/tenant.commands';
import { USER_COMMANDS } from './commands/user.commands';

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...SETUP_COMMANDS,
  ...TENANT_COMMANDS,
  ...CLIENT_COMMANDS,
  ...MEMBERSHIP_COMMANDS,
  ...CHAT_COMMANDS,
  ...PROVIDER_COMMANDS,
  ...IDENTITY_COMMANDS,
  ...USER_COMMANDS,
  ...SESSION_COMMANDS,
];

export const USAGE = `usage: npm run --silent admin -- <command> [options]

Commands print JSON on stdout and exit non-zero on error. Each reads only the configuration it
uses: PostgreSQL commands need DATABASE_URL (plus PRIVACY_KEY where they write a digest or a
seal); seed-control-plane reads the CONSOLE_* settings; user deactivate|delete and the session
commands also need REDIS_URL and PRIVACY_KEY.

${ADMIN_COMMANDS.map((c) => `  ${c.usage}`).join('\n')}
  help

Operator guide: docs/operations.md
`;

export interface AdminResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The admin CLI without the process around it (contract 7, 12): help and unknown commands give
 * the plain-text usage on stderr and status 2 before any configuration is read.
 */
export async function runAdmin(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<AdminResult> {
  const words = argv.filter((a) => !a.startsWith('-'));
  const command = ADMIN_COMMANDS.find((c) => {
    const parts = c.name.split(' ');
    return parts.every((p, i) => words[i] === p);
  });
  if (!command || argv.includes('--help') || argv.includes('-h')) return usage();
  let values;
  try {
    const parsed = parseArgs({ args: [...argv], options: command.options, allowPositionals: true, strict: true });
    if (parsed.positionals.length !== command.name.split(' ').length) return usage();
    values = parsed.values;
  } catch (err) {
    return failure('invalid_input', `${err instanceof Error ? err.message : String(err)}\n${command.usage}`);
  }
  const ctx = new CliContext(env);
  try {
    const result = await command.run(ctx, values);
    return {
      status: 0,
      stdout: typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result)}\n`,
      stderr: '',
    };
  } catch (err) {
    if (err instanceof AdminInputError) return failure('invalid_input', err.message);
    if (err instanceof ConfigError) return failure('configuration', err.message);
    return failure('failed', err instanceof Error ? err.message : String(err));
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

function usage(): AdminResult {
  return { status: 2, stdout: '', stderr: USAGE };
}

function failure(error: string, message: string): AdminResult {
  return { status: 1, stdout: '', stderr: `${JSON.stringify({ error, message })}\n` };
}
