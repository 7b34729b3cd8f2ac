import type { ApprovalPort, ApprovalState, Decision } from '../../core/ports/parked/approvals.ts';
import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { PrismaClient } from '../generated/client.ts';
import { channelKeyOf } from '../transcripts/conversations.ts';

interface ApprovalRow {
  approval: ApprovalState['status'];
  approval_expires_at: Date;
  approval_requested_at: Date | null;
  approval_by: string | null;
  approval_at: Date | null;
  approval_note: string | null;
  run_started_at: Date | null;
}

const COLUMNS =
  'approval, approval_expires_at, approval_requested_at, approval_by, approval_at, approval_note, run_started_at';

const toState = (r: ApprovalRow): ApprovalState => ({
  status: r.approval,
  expiresAt: r.approval_expires_at,
  ...(r.approval_requested_at === null ? {} : { requestedAt: r.approval_requested_at }),
  ...(r.approval_by === null ? {} : { by: r.approval_by }),
  ...(r.approval_at === null ? {} : { at: r.approval_at }),
  ...(r.approval_note === null ? {} : { note: r.approval_note }),
  started: r.run_started_at !== null,
});

/**
 * Approvals on the tool_calls rows. Every transition is one conditional UPDATE, on the database's
 * clock: the first decision wins whichever replica it reaches, and an approved call starts once.
 */
export class ApprovalLedger implements ApprovalPort {
  constructor(private readonly prisma: PrismaClient) {}

  async request(
    scope: ChannelScope,
    toolCallId: string,
    timeoutMs: number,
  ): Promise<ApprovalState> {
    const key = channelKeyOf(scope);
    await this.prisma.$executeRaw`
      UPDATE tool_calls SET approval = 'pending', approval_requested_at = now(), approval_expires_at = now() + ${timeoutMs}::int * interval '1 millisecond'
       WHERE channel_key = ${key} AND tool_call_id = ${toolCallId} AND approval IS NULL`;
    const state = await this.state(scope, toolCallId);
    if (!state) throw new Error(`No stored call ${toolCallId} to ask approval for`);
    return state;
  }

  async state(scope: ChannelScope, toolCallId: string): Promise<ApprovalState | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<ApprovalRow[]>(
      `SELECT ${COLUMNS} FROM tool_calls WHERE channel_key = $1 AND tool_call_id = $2 AND approval IS NOT NULL`,
      channelKeyOf(scope),
      toolCallId,
    );
    return row && toState(row);
  }

  async decide(
    scope: ChannelScope,
    toolCallId: string,
    decision: Decision,
  ): Promise<{ won: boolean; state: ApprovalState } | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<ApprovalRow[]>(
      `UPDATE tool_calls SET approval = $3, approval_by = $4, approval_note = $5, approval_at = now()
        WHERE channel_key = $1 AND tool_call_id = $2 AND approval = 'pending' AND ($3 <> 'expired' OR approval_expires_at <= now())
        RETURNING ${COLUMNS}`,
      channelKeyOf(scope),
      toolCallId,
      decision.status,
      decision.by ?? null,
      decision.note ?? null,
    );
    if (row) return { won: true, state: toState(row) };
    const state = await this.state(scope, toolCallId);
    return state && { won: false, state };
  }

  async waiting(scope: ChannelScope, toolCallIds: string[]): Promise<Set<string>> {
    if (toolCallIds.length === 0) return new Set();
    const rows = await this.prisma.$queryRaw<Array<{ tool_call_id: string }>>`
      SELECT tool_call_id FROM tool_calls
       WHERE channel_key = ${channelKeyOf(scope)} AND tool_call_id = ANY(${toolCallIds})
         AND approval IS NOT NULL AND run_started_at IS NULL`;
    return new Set(rows.map((r) => r.tool_call_id));
  }

  async start(scope: ChannelScope, toolCallId: string): Promise<boolean> {
    const started = await this.prisma.$executeRaw`
      UPDATE tool_calls SET run_started_at = now()
       WHERE channel_key = ${channelKeyOf(scope)} AND tool_call_id = ${toolCallId} AND approval = 'approved' AND run_started_at IS NULL`;
    return started === 1;
  }
}
