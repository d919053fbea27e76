import { runAdmin } from '../../src/cli/admin-runner';

export interface AdminRun {
  readonly status: number;
  /** Parsed JSON of stdout, or null when it was empty; loosely typed so tests read it like JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly out: any;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the admin CLI in this process, with exactly the given environment (nothing inherited). */
export async function admin(env: Record<string, string>, ...argv: string[]): Promise<AdminRun> {
  const r = await runAdmin(argv, env);
  let out: unknown = null;
  try {
    out = r.stdout ? JSON.parse(r.stdout) : null;
  } catch {
    out = null;
  }
  return { status: r.status, out, stdout: r.stdout, stderr: r.stderr };
}
