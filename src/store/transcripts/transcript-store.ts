import type {
  Conversation,
  ConversationKey,
  Message,
  ToolCall,
} from '../../core/ports/conversation.ts';
import type { Lease, StepRecords, StorePort } from '../../core/ports/store.ts';
import { channelKeyOf, conversationAt } from './conversations.ts';
import { GroupCommit } from '../group-commit.ts';
import { leaseLost } from '../leases.ts';
import { storedResultIn } from './stored-result.ts';
import type { Database } from '../database.ts';
import { Prisma } from '../generated/client.ts';
import { runOnPool } from '../pool-statement.ts';

/** As the pool gives it (see runOnPool): int8 as strings. */
interface MessageRow {
  id: string;
  turn: number;
  role: string;
  content: string;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  inbox_id: string | null;
}

function toMessage(row: MessageRow): Message {
  switch (row.role) {
    case 'tool':
      return {
        role: 'tool',
        toolCallId: row.tool_call_id ?? '',
        content: row.content,
        turn: row.turn,
      };
    case 'assistant':
      return row.tool_calls?.length
        ? { role: 'assistant', content: row.content, toolCalls: row.tool_calls, turn: row.turn }
        : { role: 'assistant', content: row.content, turn: row.turn };
    default:
      return row.inbox_id === null
        ? { role: 'user', content: row.content, turn: row.turn }
        : { role: 'user', content: row.content, turn: row.turn, inboxId: String(row.inbox_id) };
  }
}

/** One step's writes, as the agent hands them over. */
interface Step {
  conversation: Conversation;
  messages: Message[];
  records: StepRecords;
  /** Set by its write: its lease was stale, and nothing of it was stored. */
  refused?: boolean;
  /** Set by its write: the id of the conversation's last row it stored. */
  lastId?: bigint;
}

/** What a batch's statement returns: a refused step, or a conversation's last stored row. */
type StoredRow =
  | { step: number; conversation_id: null; last_id: null }
  | { step: null; conversation_id: string; last_id: string };

/** Marks each step of a batch refused, or stored up to its conversation's last row. */
function outcomes(steps: Step[], stored: StoredRow[]): void {
  const lastIds = new Map(stored.map((row) => [row.conversation_id, row.last_id]));
  for (const { step } of stored) if (step !== null) steps[step]!.refused = true;
  // A conversation's last id is a step's own only when no other step of the batch wrote to it.
  const once = (id: string) => steps.filter((s) => s.conversation.id === id).length === 1;
  for (const step of steps) {
    const lastId = lastIds.get(step.conversation.id);
    if (!step.refused && lastId && once(step.conversation.id)) step.lastId = BigInt(lastId);
  }
}

/** A step's message as a read gives it back: only what its row stores. */
function asStored(row: ReturnType<typeof recordsetsOf>['rows'][number]): Message {
  return toMessage({
    ...row,
    id: '',
    tool_calls: row.tool_calls && (JSON.parse(JSON.stringify(row.tool_calls)) as ToolCall[]),
  });
}

/**
 * A batch of steps as the rows its statement inserts: messages numbered in input order, results
 * and their binary parts by the tool call they answer.
 */
function recordsetsOf(steps: Step[]) {
  const rows = steps.flatMap(({ conversation, messages }, step) =>
    messages.map((m, ord) => ({
      step,
      ord,
      conversation_id: conversation.id,
      channel_key: channelKeyOf(conversation),
      turn: m.turn,
      role: m.role,
      content: m.content,
      tool_calls: m.role === 'assistant' && m.toolCalls?.length ? m.toolCalls : null,
      tool_call_id: m.role === 'tool' ? m.toolCallId : null,
      inbox_id: m.role === 'user' && m.inboxId !== undefined ? m.inboxId : null,
    })),
  );
  const resultsOf = ({ conversation, records }: Step, step: number) =>
    (records.results ?? []).map((r) => ({ step, conversation, r }));
  const results = steps.flatMap(resultsOf).map(({ step, conversation, r }) => ({
    step,
    conversation_id: conversation.id,
    channel_key: channelKeyOf(conversation),
    tool_call_id: r.toolCallId,
    content: r.content,
    content_chars: r.content.length,
    is_error: r.isError,
    duration_ms: Math.round(r.durationMs),
  }));
  const binaries = steps.flatMap(resultsOf).flatMap(({ step, conversation, r }) =>
    (r.binaries ?? []).map((b, position) => ({
      step,
      conversation_id: conversation.id,
      tool_call_id: r.toolCallId,
      position,
      kind: b.kind,
      mime_type: b.mimeType ?? null,
      size_bytes: b.sizeBytes,
      base64: b.base64 ?? null,
    })),
  );
  const fences = steps.flatMap(({ records: { fence } }, step) =>
    fence ? [{ step, lane_id: fence.laneId, generation: fence.generation }] : [],
  );
  return { rows, results, binaries, fences };
}

/** A transcript read so far: its messages and the id of the last row they include. */
interface CachedTranscript {
  messages: Message[];
  lastId: bigint;
  /**
   * The lease it was last read under, and written since only under it (see `loadTranscript`).
   */
  heldUnder?: string;
}

const leaseKey = (lease: Lease | undefined) => lease && `${lease.laneId}:${lease.generation}`;

/**
 * The conversation history behind the core's StorePort. Each step is one SQL statement (its
 * messages, their tool calls, the results and the usage), shared with the steps of other
 * conversations written at the same moment, and a transcript is read from the database once per
 * process: later turns read only the rows added since.
 */
export class TranscriptStore implements StorePort {
  /** Most recently used last; the oldest entry goes when the cache is full. */
  private readonly transcripts = new Map<string, CachedTranscript>();
  /** Steps of turns running at once are written together (see GroupCommit). */
  private readonly steps = new GroupCommit<Step>((steps) => this.writeSteps(steps), {
    inFlight: 2,
    maxBatch: 64,
  });

  constructor(
    private readonly db: Pick<Database, 'prisma' | 'pool'>,
    private readonly options: {
      cachedTranscripts?: number;
      /**
       * How long a step written under a lease extends it (LEASE_TTL_MS): a holder that writes is
       * alive, and after a stall longer than the lease its first write comes wholly before another
       * replica's takeover (which then finds the lease live) or wholly after it (and is refused),
       * so work started after a stall is never done twice. Without it a step's write only fences.
       */
      leaseMs?: number;
    } = {},
  ) {}

  openConversation(key: ConversationKey): Promise<Conversation> {
    return conversationAt(this.db.prisma, key);
  }

  /**
   * Rows are read by id after the cached ones. Only the replica holding a conversation's lease
   * appends to it, one step at a time, so no row can commit behind one already read; a replica
   * that took the lease over writes rows this one reads on its next turn. Under the lease it was
   * last read under, a transcript is not read at all: its steps written since were stored under
   * that lease (or refused, once another holder took it), and are cached as they were written.
   * Nor is one created under the lease: nothing was stored in it before.
   */
  async loadTranscript(
    conversation: Conversation,
    held?: { fence: Lease; created?: boolean },
  ): Promise<Message[]> {
    const heldUnder = leaseKey(held?.fence);
    const known = this.transcripts.get(conversation.id);
    const created =
      heldUnder && held?.created ? { messages: [], lastId: 0n, heldUnder } : undefined;
    const whole = heldUnder && known?.heldUnder === heldUnder ? known : created;
    if (whole) {
      this.remember(conversation.id, whole);
      return [...whole.messages];
    }
    const cached = known ?? { messages: [], lastId: 0n };
    const rows = await runOnPool<MessageRow>(
      this.db.pool,
      Prisma.sql`
      SELECT id, turn, role, content, tool_calls, tool_call_id, inbox_id FROM transcript_messages
       WHERE conversation_id = ${conversation.id}::uuid AND id > ${cached.lastId} ORDER BY id`,
    );
    const next = rows.length
      ? { messages: [...cached.messages, ...rows.map(toMessage)], lastId: BigInt(rows.at(-1)!.id) }
      : cached;
    this.remember(conversation.id, { ...next, heldUnder });
    return [...next.messages];
  }

  async appendMessages(
    conversation: Conversation,
    messages: Message[],
    records: StepRecords = {},
  ): Promise<void> {
    const step: Step = { conversation, messages, records };
    // A write that failed may have been stored all the same: the next load reads.
    await this.steps.submit(step).catch((error: unknown) => {
      delete this.transcripts.get(conversation.id)?.heldUnder;
      throw error;
    });
    const { fence } = records;
    if (step.refused && fence) throw leaseLost(fence);
    this.written(step);
  }

  /**
   * A stored step joins the cached transcript it follows, when that was read under the step's
   * lease: no other holder can have written since. Any other write (or one whose last row is not
   * known: another step of its batch wrote to the conversation too) leaves the next load to read.
   */
  private written({ conversation, messages, records, lastId }: Step): void {
    const cached = this.transcripts.get(conversation.id);
    if (!cached?.heldUnder) return;
    if (lastId === undefined || cached.heldUnder !== leaseKey(records.fence))
      return void delete cached.heldUnder;
    const { rows } = recordsetsOf([{ conversation, messages, records }]);
    cached.messages.push(...rows.map(asStored));
    cached.lastId = lastId;
  }

  /**
   * Steps of many conversations as one statement: one round trip, and atomic. Rows are numbered
   * in input order; results join calls stored by an earlier step (a statement's parts cannot see
   * each other's rows). It carries whole results, so it goes on the pool (see runOnPool). A step
   * written under a lease stores its messages and results only while the lease's generation is its
   * lane's, and extends the lease (rows locked in id order, as `DeliveryLedger.renew` locks them,
   * so the two never deadlock), so a takeover comes wholly before the statement or wholly after the
   * lease it extended runs out; a stale step is marked `refused`. Its usage is stored all the same:
   * the request was made, and paid for.
   */
  private async writeSteps(steps: Step[]): Promise<void> {
    const { rows, results, binaries, fences } = recordsetsOf(steps);
    const usage = steps.flatMap(({ conversation: c, records }) =>
      records.usage
        ? [
            {
              ...records.usage,
              conversation_id: c.id,
              platform: c.platform,
              workspace: c.workspace,
              channel: c.channel,
            },
          ]
        : [],
    );
    const conversations = steps.map((s) => s.conversation.id);
    const stored = await runOnPool<StoredRow>(
      this.db.pool,
      Prisma.sql`
      WITH fences AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(fences)}::jsonb) AS f(step int, lane_id bigint, generation bigint)
      ), held AS (
        SELECT f.step, l.id FROM fences f JOIN lanes l ON l.id = f.lane_id AND l.generation = f.generation ORDER BY l.id FOR NO KEY UPDATE OF l
      ), extended AS (
        UPDATE lanes SET lease_expires_at = greatest(lease_expires_at, now() + ${this.options.leaseMs ?? null}::int * interval '1 millisecond')
         WHERE id IN (SELECT id FROM held) AND holder IS NOT NULL
      ), stale AS (
        SELECT step FROM fences WHERE step NOT IN (SELECT step FROM held)
      ), input AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(step int, ord int, conversation_id uuid, channel_key text, turn int, role text, content text, tool_calls jsonb, tool_call_id text, inbox_id bigint)
         WHERE x.step NOT IN (SELECT step FROM stale)
      ), messages AS (
        INSERT INTO transcript_messages (conversation_id, channel_key, turn, role, content, tool_calls, tool_call_id, inbox_id)
        SELECT conversation_id, channel_key, turn, role, content, tool_calls, tool_call_id, inbox_id FROM input ORDER BY step, ord
        RETURNING id, conversation_id, channel_key, turn, tool_calls
      ), calls AS (
        INSERT INTO tool_calls (conversation_id, channel_key, message_id, tool_call_id, model_call_id, tool_name, arguments, turn, derived)
        SELECT m.conversation_id, m.channel_key, m.id, c->>'id', c->>'modelId', c->>'name', c->>'arguments', m.turn, coalesce((c->>'derived')::boolean, false)
          FROM messages m CROSS JOIN LATERAL jsonb_array_elements(m.tool_calls) c
         WHERE m.tool_calls IS NOT NULL
      ), results AS (
        INSERT INTO tool_results (call_id, tool_name, channel_key, content, content_chars, is_error, duration_ms, derived)
        SELECT c.id, c.tool_name, r.channel_key, r.content, r.content_chars, r.is_error, r.duration_ms, c.derived
          FROM jsonb_to_recordset(${JSON.stringify(results)}::jsonb)
            AS r(step int, conversation_id uuid, channel_key text, tool_call_id text, content text, content_chars int, is_error boolean, duration_ms int)
          JOIN tool_calls c ON c.conversation_id = r.conversation_id AND c.tool_call_id = r.tool_call_id
         WHERE r.step NOT IN (SELECT step FROM stale)
        RETURNING id, call_id
      ), binaries AS (
        INSERT INTO tool_result_binaries (result_id, position, kind, mime_type, size_bytes, data)
        SELECT r.id, b.position, b.kind, b.mime_type, b.size_bytes, decode(b.base64, 'base64')
          FROM jsonb_to_recordset(${JSON.stringify(binaries)}::jsonb)
            AS b(step int, conversation_id uuid, tool_call_id text, position int, kind text, mime_type text, size_bytes int, base64 text)
          JOIN tool_calls c ON c.conversation_id = b.conversation_id AND c.tool_call_id = b.tool_call_id
          JOIN results r ON r.call_id = c.id
      ), usage AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(usage)}::jsonb)
          AS u(conversation_id uuid, platform text, workspace text, channel text, "user" text, model text,
               "promptTokens" int, "cachedPromptTokens" int, "completionTokens" int, "reasoningTokens" int,
               "totalTokens" int, cost numeric, "responseId" text, "holdId" bigint)
      ), usage_rows AS (
        INSERT INTO llm_usage (conversation_id, platform, workspace, channel, user_id, model, prompt_tokens,
                               cached_prompt_tokens, completion_tokens, reasoning_tokens, total_tokens, cost, response_id)
        SELECT conversation_id, platform, workspace, channel, "user", model, "promptTokens",
               coalesce("cachedPromptTokens", 0), "completionTokens", coalesce("reasoningTokens", 0), "totalTokens",
               cost, "responseId"
          FROM usage
      ), released AS (
        DELETE FROM spend_holds WHERE id IN (SELECT "holdId" FROM usage)
      ), touched AS (
        UPDATE conversations SET updated_at = now() WHERE id = ANY(${conversations}::uuid[])
      )
      SELECT step, NULL AS conversation_id, NULL AS last_id FROM stale
      UNION ALL
      SELECT NULL, conversation_id::text, max(id)::text FROM messages GROUP BY conversation_id`,
    );
    outcomes(steps, stored);
  }

  async readToolResult(
    conversation: Conversation,
    toolCallId: string,
  ): Promise<string | undefined> {
    return (await storedResultIn(this.db.prisma, conversation, toolCallId, conversation.id))
      ?.content;
  }

  private remember(conversationId: string, transcript: CachedTranscript): void {
    this.transcripts.delete(conversationId);
    this.transcripts.set(conversationId, transcript);
    if (this.transcripts.size > (this.options.cachedTranscripts ?? 256))
      this.transcripts.delete(this.transcripts.keys().next().value!);
  }
}
