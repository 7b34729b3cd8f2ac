import { jsonrepair } from 'jsonrepair';
import { errorMessage } from '../../errors.ts';

export type ParsedArguments =
  { ok: true; args: Record<string, unknown>; repaired: boolean } | { ok: false; error: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Strict JSON object, as a truncated response must be to be trusted. */
export function isJsonObject(raw: string): boolean {
  try {
    return isPlainObject(JSON.parse(raw.trim() === '' ? '{}' : raw));
  } catch {
    return false;
  }
}

/**
 * Parses the arguments a model wrote, repairing the usual slips (single quotes, trailing commas,
 * a missing brace) when that can be done unambiguously.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, args: {}, repaired: false };
  try {
    const value: unknown = JSON.parse(raw);
    return isPlainObject(value)
      ? { ok: true, args: value, repaired: false }
      : { ok: false, error: 'arguments must be a JSON object' };
  } catch (parseError) {
    try {
      const value: unknown = JSON.parse(jsonrepair(raw));
      if (isPlainObject(value)) return { ok: true, args: value, repaired: true };
    } catch {
      // unrepairable: report the original parse error, which names the position
    }
    return { ok: false, error: `arguments are not valid JSON (${errorMessage(parseError)})` };
  }
}
