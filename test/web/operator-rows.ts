import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../src/store/database.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';

/** What a hostile channel, model, prompt or thread name holds: markup that would run or load. */
export const hostile = (canaryUrl: string) =>
  `<img src=x onerror="fetch('${canaryUrl}/op')"><script>document.title='pwned'</script>\u202Eevil`;

/** The console's workspace (the admin's), a Slack workspace (a non-admin's), and another one. */
export const LOCAL = { platform: 'console', workspace: 'local' };
export const SLACK = { platform: 'slack', workspace: 'T1' };
export const OTHER = { platform: 'slack', workspace: 'T9' };

/** A replica holding a lane of the console's workspace, and one holding another workspace's. */
export const REPLICAS = { local: 'other-host:4242:abcd1234', other: 'T9-REPLICA' };

/** Stores a tool call `call` and its whole result in `place`, as a turn does; its conversation. */
export async function storeToolResult(
  db: Database,
  place: { platform: string; workspace: string; channel: string; thread: string },
  call: string,
  content: string,
) {
  const store = new TranscriptStore(db);
  const conversation = await store.openConversation(place);
  await store.appendMessages(conversation, [
    { role: 'user', content: 'list it', turn: 1 },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: call, name: 'lister', arguments: '{}' }],
      turn: 1,
    },
  ]);
  await store.appendMessages(
    conversation,
    [{ role: 'tool', toolCallId: call, content: 'the whole', turn: 1 }],
    { results: [{ toolCallId: call, content, isError: false, durationMs: 3 }] },
  );
  return conversation;
}

/** A session of `person` on the pages, as a sign-in starts one: its cookie's token and its CSRF. */
export async function signedIn(
  db: Database,
  person: { platform: string; workspace: string; user: string },
): Promise<{ token: string; csrf: string }> {
  const token = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await db.prisma.webSession.create({
    data: {
      id: createHash('sha256').update(token).digest('hex'),
      platform: person.platform,
      workspace: person.workspace,
      userId: person.user,
      csrf,
      expiresAt: new Date(Date.now() + 3_600_000),
    },
  });
  return { token, csrf };
}

/**
 * Usage, holds, schedules with runs, and held lanes in three workspaces, names hostile where a
 * person or a tool could choose them. Returns each schedule's id by its prompt's first word.
 */
export async function seedOperatorRows(db: Database, canaryUrl: string) {
  const bad = hostile(canaryUrl);
  const conversation = await new TranscriptStore(db).openConversation({
    ...LOCAL,
    channel: 'console',
    thread: 'operators',
  });
  const usage = (
    place: { platform: string; workspace: string },
    channel: string,
    userId: string,
    model: string,
    tokens: number,
  ) => ({
    ...place,
    conversationId: conversation.id,
    channel,
    userId,
    model,
    promptTokens: tokens,
    completionTokens: 0,
    totalTokens: tokens,
    cost: tokens / 100_000,
  });
  await db.prisma.llmUsage.createMany({
    data: [
      usage(LOCAL, 'console', 'local', 'gpt-4o', 1_000),
      usage(LOCAL, `ops${bad}`, 'local', `model${bad}`, 2_000),
      usage(LOCAL, 'console', 'U-COLLEAGUE', 'gpt-4o', 500),
      usage(SLACK, 'C-U2-OWN', 'U2', 'gpt-4o', 700),
      usage(SLACK, 'C-U3-SECRET', 'U3', 'gpt-4o', 900),
      usage(OTHER, 'C-OTHER-WORKSPACE', 'U2', 'gpt-other-workspace', 5_000),
    ],
  });
  const inAnHour = new Date(Date.now() + 3_600_000);
  await db.prisma.spendHold.createMany({
    data: [
      { ...LOCAL, channel: `held${bad}`, userId: 'local', tokens: 4_096, expiresAt: inAnHour },
      { ...OTHER, channel: 'HOLD-OTHER-WORKSPACE', userId: 'U2', tokens: 7, expiresAt: inAnHour },
    ],
  });
  const schedule = (
    place: { platform: string; workspace: string },
    owner: string,
    prompt: string,
    paused?: string,
  ) =>
    db.prisma.schedule.create({
      data: {
        ...place,
        channel: 'C-SCHEDULES',
        owner,
        // New Year's Day only: no tick falls due while the test runs.
        rule: paused ? 'every day at 9:00' : '0 9 1 1 *',
        timeZone: 'UTC',
        prompt,
        ...(paused ? { pausedAt: new Date(), pausedReason: paused } : {}),
      },
    });
  const digest = await schedule(LOCAL, 'local', `digest ${bad}`);
  await schedule(LOCAL, 'local', 'paused one', `Spool can no longer post (${bad})`);
  const own = await schedule(SLACK, 'U2', 'standup of U2');
  const theirs = await schedule(SLACK, 'U3', 'private digest of U3');
  await schedule(OTHER, 'U2', 'SCHEDULE-OTHER-WORKSPACE');

  const lane = (place: { platform: string; workspace: string }, thread: string, holder?: string) =>
    db.prisma.lane.create({
      data: {
        ...place,
        channel: 'C-SCHEDULES',
        thread,
        ...(holder ? { holder, leaseExpiresAt: inAnHour, generation: 7 } : {}),
      },
    });
  const runs = await lane(LOCAL, 'a-run');
  const held = await lane(LOCAL, `thread${bad}`, REPLICAS.local);
  await lane(OTHER, 'other', REPLICAS.other);
  const entry = (laneId: bigint, key: string, status: string, delivery: object, ago: number) => ({
    platform: LOCAL.platform,
    messageKey: key,
    laneId,
    kind: 'message',
    userId: 'local',
    text: 'seeded',
    delivery,
    status,
    receivedAt: new Date(Date.now() - ago),
  });
  const tick = '2026-01-01T09:00:00.000Z';
  await db.prisma.inboxEntry.createMany({
    data: [
      entry(
        runs.id,
        `schedule:${digest.id}:${tick}`,
        'answered',
        { schedule: String(digest.id), tick },
        0,
      ),
      // Waiting behind the other replica's lease: the inbox's depth, its age five minutes.
      entry(held.id, 'waiting-1', 'pending', {}, 300_000),
    ],
  });
  return { digest: String(digest.id), own: String(own.id), theirs: String(theirs.id) };
}
