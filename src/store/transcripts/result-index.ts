import type { Logger } from '../../core/logger.ts';
import { codePointBoundary, safeSlice } from '../../core/text.ts';
import type { Database } from '../database.ts';
import { Prisma } from '../generated/client.ts';
import { runOnPool } from '../pool-statement.ts';

/** Characters per indexed piece of a result; each piece also reads on into the next by OVERLAP. */
export const CHUNK_CHARS = 8_000;
/**
 * Longer than any word worth finding, so a word cut by a piece boundary is whole in the piece
 * before.
 */
const OVERLAP = 200;
/**
 * PostgreSQL counts characters, get_continuation counts UTF-16 code units: removing every
 * character but those outside the BMP (two units each) leaves the difference.
 */
export const NOT_ASTRAL = '[^\\U00010000-\\U0010FFFF]';

/**
 * A piece of a result to index: its text, and where it starts in UTF-16 code units
 * (get_continuation's offsets).
 */
export interface IndexPiece {
  start_offset: number;
  body: string;
}

/**
 * Cuts a result into pieces of CHUNK_CHARS, each reading on by OVERLAP into the next, never
 * splitting a character: one pass over the text. (Cut in SQL, `substr` walked the text from its
 * start for every piece: 4 minutes for a 10 MB result.)
 */
export function indexPieces(content: string): IndexPiece[] {
  const pieces: IndexPiece[] = [];
  let offset = 0;
  do {
    const end = codePointBoundary(content, offset + CHUNK_CHARS);
    pieces.push({ start_offset: offset, body: safeSlice(content, offset, end + OVERLAP) });
    offset = end;
  } while (offset < content.length);
  return pieces;
}

/**
 * Results read per batch: a few, and never many megabytes at once (a stored result may be 5 MB).
 */
const BATCH_ROWS = 8;
const BATCH_CHARS = 4_000_000;

/**
 * Cuts stored tool results into indexed pieces, off the turn: a result is written with
 * indexed = false and found by search only after this has run over it, which search makes sure of
 * (`indexPending()`) before every query.
 */
export class ResultIndexer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly db: Pick<Database, 'prisma' | 'pool'>,
    private readonly logger: Logger,
  ) {}

  /**
   * Indexes pending results, a batch at a time, until none is left; returns how many it indexed.
   */
  async indexPending(): Promise<number> {
    let total = 0;
    for (;;) {
      const indexed = await this.indexBatch();
      total += indexed;
      if (indexed === 0) return total;
    }
  }

  /** Indexes every few hundred milliseconds until stopped. */
  start(intervalMs = 500): void {
    this.timer = setInterval(() => {
      this.running ??= this.indexPending()
        .catch((error: Error) =>
          this.logger.warn('Could not index tool results', { error: error.message }),
        )
        .finally(() => (this.running = undefined));
    }, intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Reads a batch, cuts it here, and writes its pieces in one statement that also claims the
   * results: a replica (or a search) that indexed one first makes the claim, and so the pieces,
   * come to nothing. No lock is held while the text is cut. The pieces, as large as the results,
   * go on the pool (see runOnPool).
   */
  private async indexBatch(): Promise<number> {
    const batch = await this.db.prisma.$queryRaw<
      Array<{ id: bigint; content: string; derived: boolean }>
    >`
      SELECT id, content, derived FROM (
        SELECT id, content, derived, sum(content_chars) OVER (ORDER BY id) - content_chars AS before
          FROM tool_results WHERE NOT indexed ORDER BY id LIMIT ${BATCH_ROWS}
      ) b WHERE before < ${BATCH_CHARS}`;
    if (batch.length === 0) return 0;
    const pieces = batch
      .filter((r) => !r.derived)
      .flatMap((r) => indexPieces(r.content).map((p) => ({ result_id: String(r.id), ...p })));
    await runOnPool(
      this.db.pool,
      Prisma.sql`
      WITH claimed AS (
        UPDATE tool_results SET indexed = true
         WHERE id = ANY(${batch.map((r) => r.id)}::bigint[]) AND NOT indexed
        RETURNING id, tool_name, channel_key, created_at
      )
      INSERT INTO tool_result_chunks (result_id, start_offset, channel_key, created_at, body, search)
      SELECT c.id, p.start_offset, c.channel_key, c.created_at, p.body,
             to_tsvector('simple'::regconfig, regexp_replace(c.tool_name || ' ' || p.body, '[^[:alnum:]]+', ' ', 'g'))
        FROM claimed c JOIN jsonb_to_recordset(${JSON.stringify(pieces)}::jsonb) AS p(result_id bigint, start_offset int, body text)
          ON p.result_id = c.id`,
    );
    return batch.length;
  }
}
