import { storeCapMarker } from '../../markers.ts';
import { redactSecretPatterns } from '../../redact.ts';
import { safeSlice } from '../../text.ts';
import type { ToolOutcome } from '../../ports/tools.ts';

export interface ResultIntake {
  /** Past this many chars a result is kept up to here, with a marker the model reads. */
  storeMaxChars: number;
  /** Masks the bot's own secrets, should a tool echo one (it read a `.env`, say). */
  maskSecrets: (text: string) => string;
  /** Also redact well-known credential formats (`TOOL_RESULT_REDACT_SECRETS`). */
  redactSecretPatterns: boolean;
}

const BINARY_NOTE =
  '\n[This result held NUL bytes, so it looks binary: each was replaced by U+FFFD.]';

/**
 * A tool's output as Spool keeps it, decided once before anything reads it: the preview, the
 * pages, grep and the store then all hold the same text, so nothing the model was shown is
 * missing from the store. NUL bytes are replaced when stored (see `wellFormed`); the note says so.
 */
export function admitResult(outcome: ToolOutcome, intake: ResultIntake): ToolOutcome {
  const masked = intake.maskSecrets(outcome.content);
  const redacted = intake.redactSecretPatterns ? redactSecretPatterns(masked) : masked;
  const capped =
    redacted.length > intake.storeMaxChars
      ? `${safeSlice(redacted, 0, intake.storeMaxChars)}\n${storeCapMarker(intake.storeMaxChars, redacted.length)}`
      : redacted;
  return { ...outcome, content: capped.includes('\u0000') ? capped + BINARY_NOTE : capped };
}
