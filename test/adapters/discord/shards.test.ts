import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ask, discordSigner, type PostedInteraction } from '../../support/discord-interactions.ts';
import { isWorkingLine } from '../../../src/adapters/discord/discord-adapter.ts';
import { FakeDiscord, nextId } from '../../support/fake-discord.ts';
import { startDiscordReplica } from '../../support/discord-replica.ts';
import { type ChatRequest, FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { createScratchDatabase, queryAt } from '../../support/global-db.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';

/**
 * Discord's gateway in 4 shards over two `npm start` processes on one PostgreSQL database, against
 * the fake Discord's gateway (which records every identify and resume per shard, and any shard
 * connected twice at once): the shards shared evenly, handed over by resuming, and taken over by
 * resuming when a replica is SIGKILLed; every mention answered once. Slash commands come over
 * HTTP (DISCORD_PUBLIC_KEY), to the replica that lives, through the takeover.
 */
const LEASE_MS = 2_000;
const SHARDS = 4;
const MESSAGE = (
  JSON.parse(
    readFileSync(
      new URL(
        '../../fixtures/discord-payloads/messages/01-mention-message-create.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ) as { payload: Record<string, unknown> }
).payload;

/** A guild on `shard` of `count` shards: Discord's `(guild_id >> 22) % shard_count`. */
const guildOn = (shard: number, count = SHARDS) =>
  String((BigInt(count) * 100_000n + BigInt(shard)) << 22n);

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let discord: FakeDiscord;
let dir: string;
const signer = discordSigner();
const replicas: Array<SpoolProcess & { interactions: string }> = [];
/** The replicas' logs, shown when the test fails. */
let logs = '';

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_shards');
  llm = await new FakeOpenAi().start();
  llm.fallback = (request: ChatRequest) => ({
    content: `answer to: ${lastUserText(request)}`,
  });
  discord = await new FakeDiscord().start();
  discord.gateway.shardCount = SHARDS;
  dir = await mkdtemp(join(tmpdir(), 'spool-shards-'));
});

afterEach((context) => {
  if (context.task.result?.state === 'fail') console.log(logs);
});

afterAll(async () => {
  for (const replica of replicas) replica.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.done.catch(() => {})));
  await Promise.all([llm.stop(), discord.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

async function startReplica(): Promise<SpoolProcess & { interactions: string }> {
  const port = await freePort();
  const replica = startDiscordReplica({
    llm,
    discord,
    databaseUrl: scratch.url,
    dataDir: dir,
    env: {
      DISCORD_MESSAGE_CONTENT: 'true',
      DISCORD_SHARD_LEASE_MS: String(LEASE_MS),
      DISCORD_IDENTIFY_SPACING_MS: '200',
      DISCORD_PUBLIC_KEY: signer.publicKeyHex,
      PORT: String(port),
    },
    onLog: (text) => (logs += text),
  });
  const started = { ...replica, interactions: `http://127.0.0.1:${port}/discord/interactions` };
  replicas.push(started);
  return started;
}

/** Each shard's live holder, from the lease rows (none before the first replica migrated). */
async function holders(): Promise<Map<number, string>> {
  const rows = await queryAt<{ thread: string; holder: string }>(
    scratch.url,
    `SELECT thread, holder FROM lanes WHERE platform = 'discord-gateway' AND holder IS NOT NULL AND lease_expires_at > now()`,
  ).catch(() => []);
  return new Map(rows.map((r) => [Number(r.thread), r.holder]));
}

const connected = () => [...discord.gateway.connectedShards()].sort().join(',');

/** A mention of Spool in a guild on `shard`, in a channel of its own; returns the channel. */
function mention(shard: number, text: string, count = SHARDS): string {
  const channel = nextId();
  discord.dispatchMessage({
    ...MESSAGE,
    id: nextId(),
    channel_id: channel,
    guild_id: guildOn(shard, count),
    content: `<@100000000000000002> ${text}`,
  });
  return channel;
}
const answers = (channel: string) =>
  discord.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${channel}/messages`);
/** The answer to an interaction: its deferred reply edited with words other than the working line. */
const edited = (token: string) =>
  discord
    .callsTo('PATCH', /@original$/)
    .filter((c) => c.path.includes(`/${token}/`) && !isWorkingLine(c.body?.content));

describe('Discord shards over two replicas', () => {
  it('shares 4 shards evenly, hands two over by resuming, and takes a SIGKILLed replica’s shards over within a lease; every mention answered once, every interaction acknowledged within 3 s, no shard ever connected twice', async () => {
    const first = await startReplica();
    await until(async () => ((await holders()).size === SHARDS ? true : undefined), 45_000);
    await until(() => (connected() === '0,1,2,3' ? true : undefined), 30_000);
    expect(new Set((await holders()).values()).size).toBe(1);

    // A second replica: two shards handed over to it, each resumed where the first left it.
    const second = await startReplica();
    const pid = String(second.child.pid);
    const shared = await until(async () => {
      const now = await holders();
      const counts = [...new Set(now.values())].map(
        (h) => [...now.values()].filter((x) => x === h).length,
      );
      return counts.length === 2 && counts.every((c) => c === 2) && connected() === '0,1,2,3'
        ? now
        : undefined;
    }, 45_000);
    const theirs = [...shared].filter(([, h]) => h.includes(`:${pid}:`)).map(([s]) => s);
    expect(theirs).toHaveLength(2);
    expect(discord.gateway.doubled).toEqual([]);
    const handed = discord.gateway.logins.filter((l) => l.kind === 'resume');
    expect(handed.map((l) => [l.shard, l.resumed]).sort()).toEqual(
      theirs.map((s) => [s, true]).sort(),
    );
    // One mention a shard: answered once, by whichever replica holds its shard.
    const before = [0, 1, 2, 3].map((s) => mention(s, `before ${s}`));
    await until(() => (before.every((c) => answers(c).length === 1) ? true : undefined), 30_000);

    // The second replica killed: its shards' mentions wait in their sessions at Discord.
    const identifiesBefore = discord.gateway.logins.filter((l) => l.kind === 'identify').length;
    const killedAt = Date.now();
    second.child.kill('SIGKILL');
    await second.done;
    const during = [0, 1, 2, 3].map((s) => mention(s, `during ${s}`));
    // Slash commands through the takeover, one every 250 ms, over HTTP to the replica that lives.
    const asked: Array<{ token: string; response: Promise<PostedInteraction> }> = [];
    const asking = setInterval(() => {
      const payload = ask(`asked during the takeover ${asked.length}`);
      asked.push({
        token: payload.token,
        response: signer.post(first.interactions, JSON.stringify(payload)),
      });
    }, 250);
    const takenOver = await until(() => {
      const resumes = discord.gateway.logins.filter(
        (l) => l.kind === 'resume' && l.at > killedAt && theirs.includes(l.shard),
      );
      return resumes.length === 2 ? resumes : undefined;
    }, 30_000);
    clearInterval(asking);
    const takeoverMs = Math.max(...takenOver.map((l) => l.at)) - killedAt;
    const acks = await Promise.all(asked.map((a) => a.response));
    const ackMs = acks.map((r) => r.ms).sort((a, b) => a - b);
    console.log(
      `takeover: ${takeoverMs} ms after SIGKILL (lease ${LEASE_MS} ms); ${acks.length} interactions over HTTP meanwhile, acknowledged in ${ackMs.at(-1)!.toFixed(0)} ms at most`,
    );
    expect(acks.length).toBeGreaterThan(0);
    for (const r of acks) expect(r).toMatchObject({ status: 200, json: { type: 5 } });
    expect(ackMs.at(-1)).toBeLessThan(3_000);
    await until(
      () => (asked.every((a) => edited(a.token).length === 1) ? true : undefined),
      30_000,
    );
    expect(takenOver.every((l) => l.resumed)).toBe(true);
    // Within one lease of the last renewal (before the kill), and the upkeep's quarter-lease tick.
    expect(takeoverMs).toBeLessThan(LEASE_MS + LEASE_MS / 4 + 1_000);
    await until(() => (during.every((c) => answers(c).length === 1) ? true : undefined), 30_000);

    // Later mentions answered: by then, a repeat of any earlier one would have been posted.
    const after = [0, 1, 2, 3].map((s) => mention(s, `after ${s}`));
    await until(() => (after.every((c) => answers(c).length === 1) ? true : undefined), 30_000);
    for (const channel of [...before, ...during, ...after])
      expect(answers(channel)).toHaveLength(1);
    for (const { token } of asked) expect(edited(token)).toHaveLength(1);
    expect(discord.gateway.doubled).toEqual([]);
    // Resumed, not identified: the day's budget untouched by the takeover.
    expect(discord.gateway.logins.filter((l) => l.kind === 'identify')).toHaveLength(
      identifiesBefore,
    );
    expect([...(await holders()).values()].every((h) => !h.includes(`:${pid}:`))).toBe(true);
  });
  it('takes a new shard count as one fenced step every replica observes: the six shared between the two replicas, no shard ever connected twice, every mention answered once', async () => {
    // Discord now recommends 6: a replica that starts reads it and settles it for all.
    const before = connected();
    expect(before).toBe('0,1,2,3');
    discord.gateway.shardCount = 6;
    await startReplica();
    const six = await until(async () => {
      const now = await holders();
      return now.size === 6 && connected() === '0,1,2,3,4,5' ? now : undefined;
    }, 60_000);
    // Both live replicas share the six, and no shard ever had two connections.
    expect(new Set(six.values()).size).toBe(2);
    expect(discord.gateway.doubled).toEqual([]);
    const mentioned = [0, 1, 2, 3, 4, 5].map((s) => mention(s, `six ${s}`, 6));
    await until(() => (mentioned.every((c) => answers(c).length === 1) ? true : undefined), 30_000);
    const later = [0, 1, 2, 3, 4, 5].map((s) => mention(s, `six later ${s}`, 6));
    await until(() => (later.every((c) => answers(c).length === 1) ? true : undefined), 30_000);
    for (const channel of mentioned) expect(answers(channel)).toHaveLength(1);
  });
});
