import type { Logger } from '../core/logger.ts';
import type { PrismaClient } from './generated/client.ts';

/** Characters per indexed piece of a result; each piece also reads on into the next by OVERLAP. */
export const CHUNK_CHARS = 8_000;
/** Longer than any word worth finding, so a word cut by a piece boundary is whole in the piece before. */
const OVERLAP = 200;
/**
 * PostgreSQL counts characters, get_continuation counts UTF-16 code units: removing every
 * character but those outside the BMP (two units each) leaves the difference.
 */
export const NOT_ASTRAL = '[^\\U00010000-\\U0010FFFF]';

/**
 * Cuts stored tool results into indexed pieces, off the turn: a result is written with
 * indexed = false and found by search only after this has run over it, which search makes sure of
 * (`indexPending({ wait: true })`) before every query.
 */
export class ResultIndexer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly logger: Logger,
  ) {}

  /**
   * Indexes pending results, a few at a time, until none is left; returns how many it indexed.
   * In the background it skips rows another replica is indexing; before a search it waits for
   * them, so that nothing stored is missing from the results.
   */
  async indexPending(options: { wait: boolean }): Promise<number> {
    let total = 0;
    for (;;) {
      const indexed = await this.indexBatch(options.wait ? '' : 'SKIP LOCKED');
      total += indexed;
      if (indexed === 0) return total;
    }
  }

  /** Indexes every few hundred milliseconds until stopped. */
  start(intervalMs = 500): void {
    this.timer = setInterval(() => {
      this.running ??= this.indexPending({ wait: false })
        .catch((error: Error) => this.logger.warn('Could not index tool results', { error: error.message }))
        .finally(() => (this.running = undefined));
    }, intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * One statement: piece offsets in characters come from generate_series; offsets in UTF-16 code
   * units (what get_continuation takes) add the characters outside the BMP in earlier pieces.
   */
  private async indexBatch(lock: '' | 'SKIP LOCKED'): Promise<number> {
    return this.prisma.$executeRawUnsafe(
      `WITH batch AS (
         SELECT id, tool_name, channel_key, created_at, content FROM tool_results
          WHERE NOT indexed ORDER BY id LIMIT 8 FOR UPDATE ${lock}
       ), pieces AS (
         SELECT b.id, b.tool_name, b.channel_key, b.created_at, g.start AS start_char,
                substr(b.content, g.start + 1, $1 + $2) AS body,
                char_length(regexp_replace(substr(b.content, g.start + 1, $1), $3, '', 'g')) AS astral
           FROM batch b CROSS JOIN LATERAL generate_series(0, greatest(char_length(b.content) - 1, 0), $1) g(start)
       ), chunks AS (
         INSERT INTO tool_result_chunks (result_id, start_char, start_offset, channel_key, created_at, search)
         SELECT id, start_char,
                start_char + coalesce(sum(astral) OVER (PARTITION BY id ORDER BY start_char ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),
                channel_key, created_at,
                to_tsvector('simple'::regconfig, regexp_replace(tool_name || ' ' || body, '[^[:alnum:]]+', ' ', 'g'))
           FROM pieces
       )
       UPDATE tool_results r SET indexed = true FROM batch WHERE r.id = batch.id`,
      CHUNK_CHARS,
      OVERLAP,
      NOT_ASTRAL,
    );
  }
}
