import { readFile } from 'node:fs/promises';
import { AdminInputError } from '../admin-command';

/**
 * A secret from a file or stdin (`-`), preferred to argv: a command line is readable by every user
 * of the machine (`ps`, /proc/PID/cmdline) and lands in shell history and process-accounting logs
 * (issue 22, point 6). The whole text, for a multi-line secret such as a PEM key.
 */
export async function readSecretText(option: string, path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch {
    throw new AdminInputError(`--${option}: cannot read ${path === '-' ? 'stdin' : path}`);
  }
}

/** A one-line secret from a file or stdin; one trailing line break is dropped, as `echo` and editors add one. */
export async function readSecretLine(option: string, path: string): Promise<string> {
  const secret = (await readSecretText(option, path)).replace(/\r?\n$/, '');
  if (secret === '' || /[\r\n]/.test(secret))
    throw new AdminInputError(`--${option}: must hold the secret alone, on one line`);
  return secret;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
