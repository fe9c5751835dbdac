import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage-error.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

const COMMON: Options = { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } };

export interface ParsedCommand {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  json: boolean;
}

/** Parses one command's options strictly: an unknown or misspelt option is an error, not ignored. */
export function parseCommand(argv: string[], options: Options, allowPositionals = false): ParsedCommand {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...COMMON, ...options }, allowPositionals, strict: true });
    return { values: values as ParsedCommand['values'], positionals, json: values.json === true };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function requiredString(parsed: ParsedCommand, name: string): string {
  const value = parsed.values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function optionalString(parsed: ParsedCommand, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function positiveInteger(raw: string, what: string): number {
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new UsageError(`${what} must be a positive integer, got "${raw}"`);
  return Number(raw);
}
