import type {
  FormAnswer,
  FormRequest,
  FormValue,
  QuestionPort,
  QuestionState,
} from '../../core/ports/parked/forms.ts';
import type { PrismaClient } from '../generated/client.ts';

interface QuestionRow {
  id: string;
  inbox_id: bigint;
  platform: string;
  asked_of: string;
  request: FormRequest;
  status: QuestionState['status'];
  content: Record<string, FormValue> | null;
  answered_by: string | null;
  expires_at: Date;
}

const COLUMNS =
  'id, inbox_id, platform, asked_of, request, status, content, answered_by, expires_at';

const toState = (r: QuestionRow): QuestionState => ({
  id: r.id,
  inboxId: String(r.inbox_id),
  platform: r.platform,
  askedOf: r.asked_of,
  request: r.request,
  status: r.status,
  ...(r.content === null ? {} : { content: r.content }),
  ...(r.answered_by === null ? {} : { by: r.answered_by }),
  expiresAt: r.expires_at,
});

/** Questions on their own rows; an answer is one conditional UPDATE on the database's clock. */
export class QuestionLedger implements QuestionPort {
  constructor(private readonly prisma: PrismaClient) {}

  async open(
    question: Omit<QuestionState, 'status' | 'expiresAt'>,
    timeoutMs: number,
  ): Promise<Date> {
    const [row] = await this.prisma.$queryRaw<{ expires_at: Date }[]>`
      INSERT INTO questions (id, inbox_id, platform, asked_of, request, expires_at)
      VALUES (${question.id}, ${BigInt(question.inboxId)}, ${question.platform}, ${question.askedOf},
              ${JSON.stringify(question.request)}::jsonb, now() + ${timeoutMs}::int * interval '1 millisecond')
      RETURNING expires_at`;
    return row!.expires_at;
  }

  async state(id: string): Promise<QuestionState | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<QuestionRow[]>(
      `SELECT ${COLUMNS} FROM questions WHERE id = $1`,
      id,
    );
    return row && toState(row);
  }

  async answer(
    id: string,
    answer: FormAnswer | { action: 'expired' },
    by?: string,
  ): Promise<{ won: boolean; state: QuestionState } | undefined> {
    const content = answer.action === 'accept' ? JSON.stringify(answer.content) : null;
    const [row] = await this.prisma.$queryRawUnsafe<QuestionRow[]>(
      `UPDATE questions SET status = $2, content = $3::jsonb, answered_by = $4, answered_at = now()
        WHERE id = $1 AND status = 'open' AND ($2 <> 'expired' OR expires_at <= now())
        RETURNING ${COLUMNS}`,
      id,
      answer.action,
      content,
      by ?? null,
    );
    if (row) return { won: true, state: toState(row) };
    const state = await this.state(id);
    return state && { won: false, state };
  }
}
