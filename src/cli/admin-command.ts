import type { ParseArgsConfig } from 'node:util';
import type { CliContext } from './cli-context';

/** A mistake in the command line or its values: reported without a stack, exit status 1. */
export class AdminInputError extends Error {}

export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/** One admin command: its words, its usage line, its options, and what it does. */
export interface AdminCommand {
  readonly name: string;
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  run(ctx: CliContext, values: OptionValues): Promise<unknown>;
}

/** The value of a string option, or an input error naming the option. */
export function required(values: OptionValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new AdminInputError(`--${name} is required`);
  return v;
}

export function optional(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function list(values: OptionValues, name: string): string[] {
  const v = values[name];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}
