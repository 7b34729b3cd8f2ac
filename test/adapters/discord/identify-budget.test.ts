import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APP_ID, FakeDiscord } from '../../support/fake-discord.ts';
import { startDiscordReplica } from '../../support/discord-replica.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { createScratchDatabase, queryAt } from '../../support/global-db.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';

/**
 * A replica crash-looping against a Discord that drops every session (each start identifies): its
 * identifies of one bucket never closer than the spacing, whichever process made them, and the
 * day's count never taken below the margin: past it the replica waits, connected to nothing.
 * Intervals are short (settings) so that the loop is seconds, not Discord's minutes.
 */
const SPACING_MS = 2_500;
const SHARDS = 2;
/** Discord's remaining identifies for the day, and those no reconnect may take. */
const REMAINING = 7;
const MARGIN = 3;

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let discord: FakeDiscord;
let dir: string;
let logs = '';
const replicas: SpoolProcess[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_identifies');
  llm = await new FakeOpenAi().start();
  discord = await new FakeDiscord().start();
  discord.gateway.shardCount = SHARDS;
  discord.gateway.resumable = false;
  discord.sessionStartLimit = { ...discord.sessionStartLimit, remaining: REMAINING };
  dir = await mkdtemp(join(tmpdir(), 'spool-identifies-'));
});

afterEach((context) => {
  if (context.task.result?.state === 'fail') console.log(logs);
});

afterAll(async () => {
  for (const replica of replicas) replica.child.kill('SIGKILL');
  await Promise.all(replicas.map((r) => r.done.catch(() => {})));
  await Promise.all([llm.stop(), discord.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

function startReplica(port: number): SpoolProcess {
  const replica = startDiscordReplica({
    llm,
    discord,
    databaseUrl: scratch.url,
    dataDir: dir,
    env: {
      PORT: String(port),
      DISCORD_SHARD_LEASE_MS: '1000',
      DISCORD_IDENTIFY_SPACING_MS: String(SPACING_MS),
      DISCORD_IDENTIFY_MARGIN: String(MARGIN),
    },
    onLog: (text) => (logs += text),
  });
  replicas.push(replica);
  return replica;
}

const identifies = () => discord.gateway.logins.filter((l) => l.kind === 'identify');

/** A counter's value on the replica's /metrics, once it serves them. */
async function metric(port: number, line: string): Promise<number | undefined> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found ? Number(found.split(' ').at(-1)) : undefined;
}

describe('identifies across a crash loop', () => {
  it('spaces a bucket’s identifies across processes and stops at the day’s margin, waiting instead', async () => {
    const allowed = REMAINING - MARGIN;
    // Each start identifies both shards (Discord dropped their sessions), then is SIGKILLed.
    for (let started = 0; identifies().length < allowed; started++) {
      const replica = startReplica(await freePort());
      const want = Math.min(allowed, identifies().length + SHARDS);
      await until(() => (identifies().length >= want ? true : undefined), 60_000);
      replica.child.kill('SIGKILL');
      await replica.done;
      expect(started).toBeLessThan(allowed);
    }
    // The next start finds the budget at its margin: it waits, and says so on its metrics.
    const port = await freePort();
    startReplica(port);
    await until(
      async () =>
        ((await metric(port, 'spool_discord_shard_connects_total{kind="kept_back"}')) ?? 0) >= 1
          ? true
          : undefined,
      60_000,
    );
    expect(identifies()).toHaveLength(allowed);
    const [row] = await queryAt<{ identifies_left: number }>(
      scratch.url,
      'SELECT identifies_left FROM discord_gateways WHERE application_id = $1',
      [APP_ID],
    );
    expect(row!.identifies_left).toBe(MARGIN);
    // One bucket (max_concurrency 1): every identify at least the spacing after the one before.
    const at = identifies().map((l) => l.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    console.log(`identify gaps (ms): ${gaps.join(', ')}`);
    // Each is taken from the database once the spacing has passed, however late its shard woke;
    // the fake reads it on arrival: allow for the few ms from the take to the socket.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(SPACING_MS - 50);
  }, 300_000);
});
