import {
  GatewayIntentBits,
  GuildMemberFlags,
  ReactionType,
  type APIMessage,
  type GatewayMessageReactionAddDispatchData,
  type GatewayMessageReactionRemoveDispatchData,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNREAD_WORDS } from '../../../src/adapters/discord/text.ts';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import type { Policy } from '../../../src/core/delivery/rules/policy.ts';
import type { Database } from '../../../src/store/database.ts';
import { startDiscordSpool, GUILD, type DiscordSpool } from '../../support/discord-spool.ts';
import { nextId, type FakeDiscord } from '../../support/fake-discord.ts';
import { type FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';

/**
 * Reactions as requests on Discord: MESSAGE_REACTION_ADD and MESSAGE_REACTION_REMOVE as the gateway
 * sends them (discord-api-types' shapes), through discord.js against the fake gateway, the reacted
 * message read over REST, with a policy that maps emoji to prompts and allow-lists by role.
 */
const ROLE = '400000000000000005';
const ALICE = '300000000000000001';
const AUTHOR = '300000000000000002';
const PROMPT = 'Look into this message and say what you find';
const CUSTOM_EMOJI = { id: '700000000000000001', name: 'triage', animated: false };

let bot: DiscordSpool;
let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;

beforeAll(async () => {
  const policy: Policy = {
    rules: [
      { match: {}, reactions: { '🔍': PROMPT, triage: 'Triage this' } },
      { match: { channel: '1' }, reactions: { '👀': 'Elsewhere only' } },
    ],
  };
  bot = await startDiscordSpool({
    engine: { policy },
    adapter: { allowedRoles: [ROLE], policy },
  });
  ({ db, llm, discord } = bot);
  llm.fallback = () => ({ content: 'Found it: the disk is nearly full.' });
  discord.memberRoles.set(ALICE, [ROLE]);
});

afterAll(() => bot?.close());

/** A person's message in `channel`, as GET channel message answers it. */
function written(channel: string, content: string): string {
  const id = nextId();
  discord.messages.set(id, {
    id,
    channel_id: channel,
    guild_id: GUILD,
    type: 0,
    content,
    author: { id: AUTHOR, username: 'bob', discriminator: '0', global_name: 'Bob', avatar: null },
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
  } satisfies Omit<APIMessage, 'flags' | 'components'> & { guild_id: string });
  return id;
}

/** Alice's reaction with `emoji` to message `id` in `channel`, as the gateway sends it. */
function react(
  channel: string,
  id: string,
  emoji: { id: string | null; name: string; animated?: boolean } = { id: null, name: '🔍' },
) {
  discord.dispatchReaction('MESSAGE_REACTION_ADD', {
    user_id: ALICE,
    channel_id: channel,
    message_id: id,
    guild_id: GUILD,
    message_author_id: AUTHOR,
    member: {
      user: {
        id: ALICE,
        username: 'alice',
        discriminator: '0',
        global_name: 'Alice',
        avatar: null,
      },
      roles: [ROLE],
      joined_at: '2026-01-04T20:21:10.139000+00:00',
      deaf: false,
      mute: false,
      flags: 0 as GuildMemberFlags,
    },
    emoji,
    burst: false,
    burst_colors: [],
    type: ReactionType.Normal,
  } satisfies GatewayMessageReactionAddDispatchData);
}

/** Alice takes her 🔍 off message `id`: the event names no member, so no roles. */
function unreact(channel: string, id: string) {
  discord.dispatchReaction('MESSAGE_REACTION_REMOVE', {
    user_id: ALICE,
    channel_id: channel,
    message_id: id,
    guild_id: GUILD,
    emoji: { id: null, name: '🔍' },
    burst: false,
    type: ReactionType.Normal,
  } satisfies GatewayMessageReactionRemoveDispatchData);
}

const posts = (channel: string) =>
  discord.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${channel}/messages`);
/** The model's requests whose turn's message (the last a person sent) has `words`. */
const asked = (words: string) => llm.requests.filter((r) => lastUserText(r).includes(words));
const rowsOf = (messageKey: string) =>
  db.prisma.inboxEntry.findMany({ where: { platform: 'discord', messageKey } });

describe('Discord reactions as requests', () => {
  it('asks for the reactions’ intents, none privileged, where the policy maps an emoji', () => {
    const wanted =
      GatewayIntentBits.Guilds |
      GatewayIntentBits.GuildMessages |
      GatewayIntentBits.DirectMessages |
      GatewayIntentBits.GuildMessageReactions |
      GatewayIntentBits.DirectMessageReactions;
    expect(discord.intents.at(-1)).toBe(wanted);
  });

  it('answers a mapped reaction once, as a reply to the message, with the message quoted, however often the gateway delivers it', async () => {
    const ch = nextId();
    const id = written(ch, 'Disk usage on db-1 is at 97%');
    react(ch, id);
    react(ch, id);
    // Then another emoji on it, answered after the repeat arrived: the repeat asked nothing.
    react(ch, id, CUSTOM_EMOJI);
    await discord.waitFor(() => posts(ch).length === 2);
    expect(posts(ch)[0]!.body).toMatchObject({
      content: 'Found it: the disk is nearly full.',
      message_reference: { message_id: id },
    });
    // One request per emoji, each the prompt with the message quoted.
    const quoted = `The message (from <@${AUTHOR}>):\n> Disk usage on db-1 is at 97%`;
    expect(asked(quoted).map((r) => lastUserText(r))).toEqual([
      `${PROMPT}\n\n${quoted}`,
      `Triage this\n\n${quoted}`,
    ]);
    await expect
      .poll(async () =>
        (await rowsOf(`reaction:${ch}:${id}:${ALICE}:🔍`)).map((r) => [r.userId, r.status]),
      )
      .toEqual([[ALICE, 'answered']]);
    expect(posts(ch)).toHaveLength(2);
  });

  it('asks nothing for an emoji no prompt is mapped to here; a server’s own emoji is named by its name; a message Discord hides the words of is quoted as a note', async () => {
    const ch = nextId();
    const id = written(ch, '');
    // 👀 is mapped only in another channel: nothing is asked, nothing stored.
    react(ch, id, { id: null, name: '👀' });
    react(ch, id, CUSTOM_EMOJI);
    await discord.waitFor(() => posts(ch).length === 1);
    expect(asked('Elsewhere only')).toEqual([]);
    expect(await rowsOf(`reaction:${ch}:${id}:${ALICE}:👀`)).toEqual([]);
    const [request] = asked(UNREAD_WORDS);
    expect(lastUserText(request!)).toBe(
      `Triage this\n\nThe message (from <@${AUTHOR}>):\n> ${UNREAD_WORDS}`,
    );
  });

  it('stops the turn of a reaction taken back while it runs, with the note a Stop leaves', async () => {
    const ch = nextId();
    const id = written(ch, 'Latency doubled at noon');
    llm.latencyMs = 30_000;
    try {
      react(ch, id);
      await discord.waitFor(() => asked('> Latency doubled at noon').length === 1);
      unreact(ch, id);
      await discord.waitFor(() => posts(ch).length === 1);
    } finally {
      llm.latencyMs = 0;
    }
    expect(posts(ch)[0]!.body?.content).toBe(STOPPED_REPLY);
    const [row] = await rowsOf(`reaction:${ch}:${id}:${ALICE}:🔍`);
    expect(row?.stoppedBy).toBe(ALICE);
  });
});
