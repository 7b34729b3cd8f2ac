import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isWorkingLine, NOTHING_TO_STOP } from '../../../src/adapters/discord/discord-adapter.ts';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { GUILD, startDiscordAdapter } from '../../support/discord-spool.ts';
import { FakeDiscord, nextId, type DiscordCall } from '../../support/fake-discord.ts';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';
import { EVERYTHING_SERVER, REPO_ROOT } from '../../support/process.ts';

/**
 * A tool server's questions (MCP elicitation, form mode) and prompts on Discord: Answer opens a
 * modal for the person who asked, and real MCP servers over stdio get what they typed.
 */
const ASKER = '300000000000000001';
const STRANGER = '300000000000000002';

let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;
let source: McpToolSource;
let stop: () => Promise<void>;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  discord = await new FakeDiscord().start();
  const config = parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        asker: {
          command: process.execPath,
          args: [join(REPO_ROOT, 'test/fixtures/asking-mcp-server.mjs')],
        },
        everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      },
    }),
    join(tmpdir(), 'mcp.json'),
    process.env,
    new Set(),
  );
  source = await McpToolSource.start(config, silentLogger, {
    maxMessageBytes: 1_000_000,
    binaryMaxBytes: 1_000_000,
  });
  const store = testStore(db);
  const agent = testAgent({ fake: llm, store, sources: [source] });
  const pipeline = testEngine(db, agent, {}, { prompts: source });
  ({ stop } = await startDiscordAdapter(pipeline, { apiUrl: discord.apiUrl }));
});
afterAll(async () => {
  await stop();
  await source.close();
  await discord.stop();
  await llm.stop();
  await db.close();
});
beforeEach(() => {
  // The scripted model: the prompt says how many fields to ask; then it repeats the result.
  llm.fallback = (request: ChatRequest) => {
    const last = request.messages.at(-1)!;
    return last.role === 'tool'
      ? { content: `tool said: ${last.content}` }
      : {
          toolCalls: [
            { id: 'ask', name: 'asker__sign_up', arguments: `{"fields":${last.content}}` },
          ],
        };
  };
});

const forToken = (token: string) => (c: DiscordCall) => c.path.includes(`/${token}`);
const edits = (token: string) => discord.answersTo(token);
const followUps = (token: string) =>
  discord.callsTo('POST', /^\/webhooks\/\d+\/[^/]+$/).filter(forToken(token));
const callbacks = (token: string) => discord.callbacksOf(token);
const answerOf = (token: string) => edits(token).at(-1)?.body?.content;
const answer = (token: string) =>
  edits(token).find((e) => String(e.body?.content).startsWith('tool said'));

/** Asks for a form of `fields` fields; resolves with the prompt's buttons. */
async function askFor(fields: number) {
  const channelId = nextId();
  const { token } = discord.sendCommand({
    name: 'ask',
    options: [{ name: 'prompt', value: String(fields) }],
    guildId: GUILD,
    channelId,
    userId: ASKER,
  });
  await discord.waitFor(() => followUps(token).some((c) => Array.isArray(c.body?.components)));
  const prompt = followUps(token).find((c) => Array.isArray(c.body?.components))!;
  const [row] = prompt.body!.components as Array<{
    components: Array<{ custom_id: string; label: string }>;
  }>;
  const click = (label: string, userId = ASKER) =>
    discord.clickButton({
      customId: row!.components.find((b) => b.label === label)!.custom_id,
      messageId: nextId(),
      guildId: GUILD,
      channelId,
      userId,
    });
  return { token, channelId, prompt, buttons: row!.components, click };
}

describe('a question a tool asks, on Discord', () => {
  it('opens a modal for the person who asked only, names what to correct, and the server gets the answer with its defaults', async () => {
    const { token, channelId, prompt, buttons, click } = await askFor(2);
    expect(edits(token)[0]!.body).toMatchObject({ content: 'Waiting for your answer…' });
    expect(prompt.body!.content).toBe(`\`asker\` asks <@${ASKER}>: Who is signing up?`);
    expect(buttons.map((b) => b.label)).toEqual(['Answer', 'Decline', 'Cancel']);

    const stranger = click('Answer', STRANGER);
    await discord.waitFor(() => callbacks(stranger.token).length === 1);
    expect(callbacks(stranger.token)[0]!.body).toMatchObject({
      type: 4,
      data: { content: 'Only the person whose message started this can answer it.', flags: 64 },
    });

    const opened = click('Answer');
    await discord.waitFor(() => callbacks(opened.token).length === 1);
    const modal = callbacks(opened.token)[0]!.body as {
      type: number;
      data: {
        custom_id: string;
        components: Array<{ components: Array<Record<string, unknown>> }>;
      };
    };
    expect(modal.type).toBe(9);
    expect(modal.data.components.map((r) => r.components[0])).toEqual([
      expect.objectContaining({ type: 4, custom_id: 'name', label: 'Name' }),
      expect.objectContaining({ type: 4, custom_id: 'seats', label: 'Seats', value: '1' }),
    ]);

    const submit = (values: Record<string, string>) =>
      discord.submitModal({
        customId: modal.data.custom_id,
        messageId: nextId(),
        values,
        guildId: GUILD,
        channelId,
        userId: ASKER,
      });
    const wrong = submit({ name: '', seats: '11' });
    await discord.waitFor(() => callbacks(wrong.token).length === 1);
    expect(callbacks(wrong.token)[0]!.body).toMatchObject({
      type: 4,
      data: {
        content: 'Nothing was sent yet. Please correct:\n• Name: required\n• Seats: at most 10',
        flags: 64,
      },
    });
    const right = submit({ name: 'Ada', seats: '' });
    await discord.waitFor(() => answer(token) !== undefined);
    expect(callbacks(right.token)[0]!.body).toMatchObject({ type: 6 });
    expect(answer(token)!.body!.content).toBe(
      'tool said: got {"action":"accept","content":{"name":"Ada","seats":1}}',
    );
    const settled = discord.callsTo('PATCH', new RegExp(`/${token}/messages/\\d+$`));
    expect(settled.map((c) => c.body)).toEqual([
      expect.objectContaining({
        content: `✅ Answered by <@${ASKER}>: \`asker\` asked "Who is signing up?"`,
        components: [],
      }),
    ]);
  });

  it('says a form larger than a Discord modal cannot be answered there, and Decline declines it', async () => {
    const { token, click } = await askFor(6);
    const opened = click('Answer');
    await discord.waitFor(() => callbacks(opened.token).length === 1);
    expect(callbacks(opened.token)[0]!.body).toMatchObject({
      type: 4,
      data: {
        content:
          '`asker` asks for 6 fields, and a Discord form holds 5, so it cannot be answered here: please Decline it.',
        flags: 64,
      },
    });
    click('Decline');
    await discord.waitFor(() => answer(token) !== undefined);
    expect(answer(token)!.body!.content).toBe('tool said: got {"action":"decline"}');
  });

  it('offers a page to open as a link, "Open <host>", and Done, which answers it', async () => {
    llm.fallback = (request: ChatRequest) =>
      request.messages.at(-1)!.role === 'tool'
        ? { content: `tool said: ${request.messages.at(-1)!.content}` }
        : { toolCalls: [{ id: 'page', name: 'asker__open_page', arguments: '{}' }] };
    const { token, prompt, buttons, click } = await askFor(0);
    expect(prompt.body!.content).toBe(
      `\`asker\` asks <@${ASKER}> to open a page on pay.example.com: Pay there.`,
    );
    expect(buttons.map((b) => b.label)).toEqual([
      'Open pay.example.com',
      'Done',
      'Decline',
      'Cancel',
    ]);
    expect(buttons[0]).toMatchObject({ style: 5, url: 'https://pay.example.com/checkout' });
    const done = click('Done');
    await discord.waitFor(() => answer(token) !== undefined);
    expect(answer(token)!.body!.content).toBe('tool said: page accept');
    // No modal: the click itself was the answer.
    expect(callbacks(done.token).map((c) => c.body?.type)).toEqual([6]);
  });
});

describe("a tool server's prompts, as /prompt", () => {
  const prompt = (channelId: string, server: string, name: string, args?: string) =>
    discord.sendCommand({
      name: 'prompt',
      options: [
        { name: 'server', value: server },
        { name: 'name', value: name },
        ...(args ? [{ name: 'arguments', value: args }] : []),
      ],
      guildId: GUILD,
      channelId,
      userId: ASKER,
    });

  it('names what is wrong privately, and answers a prompt as the /ask of its text', async () => {
    const ch = nextId();
    const wrong = prompt(ch, 'everything', 'no-such-prompt');
    await discord.waitFor(() => callbacks(wrong.token).length === 1);
    const listed = callbacks(wrong.token)[0]!.body as {
      type: number;
      data: { content: string; flags: number };
    };
    expect(listed).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(listed.data.content).toContain('There is no prompt `everything no-such-prompt`.');
    expect(listed.data.content).toContain('• `everything args-prompt city=… [state=…]`');
    llm.fallback = (request) => ({ content: `heard: ${request.messages.at(-1)!.content}` });
    const { token } = prompt(ch, 'everything', 'args-prompt', 'city="New York" state=NY');
    await discord.waitFor(() => edits(token).length === 1);
    expect(callbacks(token).map((c) => (c.body as { type: number }).type)).toEqual([5]);
    expect(edits(token)[0]!.body!.content).toBe("heard: What's weather in New York, NY?");
  });
});

it('shows what Spool is doing in the deferred response, then replaces it with the reply', async () => {
  llm.enqueue(
    {
      toolCalls: [
        {
          id: 'long',
          name: 'everything__trigger-long-running-operation',
          arguments: '{"duration":2,"steps":2}',
        },
      ],
    },
    { content: 'all done' },
  );
  const { token } = discord.sendCommand({
    name: 'ask',
    options: [{ name: 'prompt', value: 'run the long one' }],
    guildId: GUILD,
    channelId: nextId(),
    userId: ASKER,
  });
  await discord.waitFor(() => answerOf(token) === 'all done');
  const contents = discord
    .callsTo('PATCH', /@original$/)
    .filter(forToken(token))
    .map((c) => c.body?.content);
  expect(contents[0]).toMatch(/^⏳ Spool is running everything__trigger-long-running-operation/);
  expect(contents.at(-1)).toBe('all done');
  expect(contents.slice(0, -1).every(isWorkingLine)).toBe(true);
});

it('stops a turn on its Stop button within a second or so, keeps what it did, and says so; a late Stop changes nothing', async () => {
  llm.enqueue({
    toolCalls: [
      {
        id: 'long',
        name: 'everything__trigger-long-running-operation',
        arguments: '{"duration":30,"steps":30}',
      },
    ],
  });
  const channelId = nextId();
  const { token } = discord.sendCommand({
    name: 'ask',
    options: [{ name: 'prompt', value: 'take your time' }],
    guildId: GUILD,
    channelId,
    userId: ASKER,
  });
  const working = () =>
    discord
      .callsTo('PATCH', /@original$/)
      .filter(forToken(token))
      .find((c) => Array.isArray(c.body?.components) && (c.body.components as unknown[]).length);
  await discord.waitFor(() => working() !== undefined);
  const [row] = working()!.body!.components as Array<{
    components: Array<{ custom_id: string; label: string }>;
  }>;
  expect(row!.components.map((b) => b.label)).toEqual(['Stop']);
  const click = () =>
    discord.clickButton({
      customId: row!.components[0]!.custom_id,
      messageId: nextId(),
      guildId: GUILD,
      channelId,
      userId: ASKER,
    });
  const clickedAt = Date.now();
  const stop = click();
  await discord.waitFor(() => edits(token).length === 1);
  expect(Date.now() - clickedAt).toBeLessThan(5_000);
  expect(callbacks(stop.token)[0]!.body).toMatchObject({ type: 6 });
  expect(edits(token)[0]!.body).toMatchObject({ content: STOPPED_REPLY, components: [] });
  const late = click();
  await discord.waitFor(() => callbacks(late.token).length === 1);
  expect(callbacks(late.token)[0]!.body).toMatchObject({
    type: 4,
    data: { content: NOTHING_TO_STOP, flags: 64 },
  });
  // The call's result is stored as stopped, for a later "go on".
  const result = await db.prisma.toolResult.findFirstOrThrow({
    where: { toolName: 'everything__trigger-long-running-operation', isError: true },
    orderBy: { createdAt: 'desc' },
  });
  expect(result.content).toContain('was stopped before it finished');
});
