import type { AgentOptions } from './agent.ts';
import type { PreviewSizes } from './results/preview.ts';
import { toolOfferSettings } from './calls/tool-offer.ts';
import type { PageOptions } from '../builtins/get-continuation.ts';
import { PAGE_MARKER_CHARS, PREVIEW_MARKER_CHARS } from '../markers.ts';
import type { SettingsReader } from '../ports/settings.ts';
import { secretMasker } from '../redact.ts';

/** Who Spool is; what each offered tool adds comes from the tool itself (its `guidance`). */
export const DEFAULT_SYSTEM_PROMPT = `You are Spool, a helpful assistant working with a team in chat.
Use the tools you have when they help, then answer concisely in Markdown.`;

/**
 * The turn loop's section, and get_continuation's: every size derived from TOOL_RESULT_MAX_CHARS is
 * derived here.
 */
export interface AgentSettings {
  loop: AgentOptions;
  pages: PageOptions;
}

export function agentSettings(r: SettingsReader): AgentSettings {
  const maxChars = r.int('TOOL_RESULT_MAX_CHARS', 20_000);
  const preview = previewSizes(r, maxChars);
  const storeMaxChars = r.int('TOOL_RESULT_STORE_MAX_CHARS', 20_000_000, maxChars);
  // A step is written as one jsonb value, which PostgreSQL caps at 255 MB (3 bytes a char at
  // worst).
  if (storeMaxChars > 80_000_000)
    r.problem(`TOOL_RESULT_STORE_MAX_CHARS must be at most 80000000 (got ${storeMaxChars})`);
  return {
    loop: {
      systemPrompt: systemPrompt(r),
      budget: { maxChars, turnBudgetChars: r.int('TOOL_RESULT_BUDGET_CHARS', 200_000), ...preview },
      // Finished turns' results become a line each; on overflow the current turn's are cut to a
      // fixed head and tail, whatever the fresh previews are.
      compaction: {
        minChars: r.int('MICROCOMPACT_MIN_CHARS', 500, 0),
        horizonTurns: r.int('MICROCOMPACT_HORIZON_TURNS', 20, 0),
        headChars: 2_000,
        tailChars: 500,
      },
      // Its preview must fit beside the marker, as a result's does.
      userPreview: {
        maxChars: r.int(
          'USER_MESSAGE_MAX_CHARS',
          maxChars,
          preview.headChars + preview.tailChars + PREVIEW_MARKER_CHARS,
        ),
        ...preview,
      },
      maxContinuations: r.int('MAX_CONTINUATIONS', 3, 0),
      retryMaxTokens: r.int('OPENAI_RETRY_MAX_TOKENS', 16_384),
      maxToolIterations: r.int('MAX_TOOL_ITERATIONS', 20),
      resultIntake: {
        storeMaxChars,
        maskSecrets: secretMasker(r.secrets()),
        redactSecretPatterns: r.flag('TOOL_RESULT_REDACT_SECRETS', false),
      },
      toolOffer: toolOfferSettings(r),
    },
    pages: {
      // A page and its marker (as the request shows it) fit in TOOL_RESULT_MAX_CHARS, as a preview
      // does; a page reads the whole rest of a result instead when the model's window (known by
      // default: see src/llm/context-window.ts) and the turn's budget hold it. CONTINUATION_CHUNK_CHARS, when set, caps every
      // page: pages are then that size, as they were.
      chunkChars: Math.max(1_000, maxChars - PAGE_MARKER_CHARS),
      maxChunkChars:
        r.string('CONTINUATION_CHUNK_CHARS') === undefined
          ? undefined
          : r.int('CONTINUATION_CHUNK_CHARS', 1),
      maxPages: r.int('MAX_CONTINUATION_PAGES', 50),
    },
  };
}

function systemPrompt(r: SettingsReader): string {
  const inline = r.string('SYSTEM_PROMPT');
  const file = r.file('SYSTEM_PROMPT_FILE');
  if (inline && r.string('SYSTEM_PROMPT_FILE'))
    r.problem('set SYSTEM_PROMPT or SYSTEM_PROMPT_FILE, not both');
  return file ?? inline ?? DEFAULT_SYSTEM_PROMPT;
}

/**
 * Head and tail of a preview. Unset, they are 4,000 + 1,000, scaled down to what fits beside the
 * marker in TOOL_RESULT_MAX_CHARS (and around an explicit other one); only explicit values can
 * fail to fit, and the problem says which values were defaults.
 */
function previewSizes(r: SettingsReader, maxChars: number): PreviewSizes {
  const HEAD = 'TOOL_RESULT_PREVIEW_HEAD_CHARS';
  const TAIL = 'TOOL_RESULT_PREVIEW_TAIL_CHARS';
  const room = maxChars - PREVIEW_MARKER_CHARS;
  const scale = Math.max(0, Math.min(1, room / 5_000));
  let headChars = r.int(HEAD, Math.floor(4_000 * scale));
  let tailChars = r.int(TAIL, Math.floor(1_000 * scale), 0);
  const [headSet, tailSet] = [r.string(HEAD) !== undefined, r.string(TAIL) !== undefined];
  if (!headSet) headChars = Math.max(1, Math.min(headChars, room - tailChars));
  if (!tailSet) tailChars = Math.max(0, Math.min(tailChars, room - headChars));
  if (headChars + tailChars > room) {
    const value = (name: string, n: number, set: boolean) =>
      `${name} (${n}${set ? '' : ', the default'})`;
    r.problem(
      `${value(HEAD, headChars, headSet)} + ${value(TAIL, tailChars, tailSet)} must leave room for the ${PREVIEW_MARKER_CHARS}-char marker within TOOL_RESULT_MAX_CHARS (${maxChars}): at most ${room} together`,
    );
  }
  return { headChars, tailChars };
}
