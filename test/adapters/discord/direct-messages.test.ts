import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { GUILD, startDiscordSpool, type DiscordSpool } from '../../support/discord-spool.ts';
import { nextId } from '../../support/fake-discord.ts';
import { until } from '../../support/process.ts';

/**
 * Direct messages with Spool are in no server: they are all recorded under one workspace, `dm`,
 * and there each person's things are theirs alone. An admin the policy names is anyone there, over
 * Discord's gateway and REST (the fake), as they are an admin in a server.
 */
const ADMIN = '300000000000000091';
const MEMBER = '300000000000000092';
/** Each one's direct message with Spool. */
const ADMIN_DM = nextId();
const MEMBER_DM = nextId();

let bot: DiscordSpool;

beforeAll(async () => {
  bot = await startDiscordSpool({
    engine: { policy: { rules: [], admins: [ADMIN] }, scheduleTimeZone: 'UTC' },
    deps: (db) => ({ schedules: new ScheduleLedger(db.prisma) }),
  });
  bot.llm.fallback = () => ({ content: 'Noted.' });
});

afterAll(() => bot?.close());

/** `/name` by `user` in `channel` (a direct message without `guildId`): Spool's answer's text. */
async function command(
  name: string,
  where: { channelId: string; userId: string; guildId?: string },
  options: Array<{ name: string; value: string }> = [],
): Promise<string> {
  const { discord } = bot;
  const { token } = discord.sendCommand({ name, options, ...where });
  // A private answer at once, or a deferral and then the answer in its place.
  const answer = await until(() => {
    const [callback] = discord.callbacksOf(token);
    const content = (callback?.body as { data?: { content?: string } } | undefined)?.data?.content;
    return content ?? discord.answersTo(token)[0]?.body?.content;
  });
  return String(answer);
}

/** `/ask` by `user` in `channel`, answered. */
const ask = (where: { channelId: string; userId: string; guildId?: string }, prompt: string) =>
  command('ask', where, [{ name: 'prompt', value: prompt }]);

describe('an admin in a direct message', () => {
  it('sees their own usage alone there, and everyone’s in a server', async () => {
    const inServer = { channelId: nextId(), guildId: GUILD };
    expect(await ask({ channelId: MEMBER_DM, userId: MEMBER }, 'a private question')).toBe(
      'Noted.',
    );
    expect(await ask({ channelId: ADMIN_DM, userId: ADMIN }, 'my own question')).toBe('Noted.');
    expect(await ask({ ...inServer, userId: MEMBER }, 'a question in the server')).toBe('Noted.');

    const own = await command('usage', { channelId: ADMIN_DM, userId: ADMIN });
    expect(own).toContain('*Your usage here*');
    expect(own).toContain(`<#${ADMIN_DM}>`);
    expect(own).not.toContain(`<#${MEMBER_DM}>`);
    const everyone = await command('usage', { ...inServer, userId: ADMIN });
    expect(everyone).toContain('*Usage in this workspace* (everyone’s: you are an admin)');
    expect(everyone).toContain(`<@${MEMBER}>`);
  });

  it('is told another’s schedule there does not exist, and it stays; its owner cancels it', async () => {
    const created = await command('schedule', { channelId: MEMBER_DM, userId: MEMBER }, [
      { name: 'what', value: 'every day at 9:00 My own notes' },
    ]);
    const id = /Scheduled #(\d+)/.exec(created)?.[1];
    expect(id).toBeDefined();
    const cancel = [{ name: 'what', value: `cancel ${id}` }];
    expect(await command('schedule', { channelId: ADMIN_DM, userId: ADMIN }, cancel)).toBe(
      `There is no schedule #${id} here (\`schedule list\` shows them).`,
    );
    expect(await bot.db.prisma.schedule.count({ where: { id: BigInt(id!) } })).toBe(1);
    expect(await command('schedule', { channelId: MEMBER_DM, userId: MEMBER }, cancel)).toBe(
      `Cancelled schedule #${id}.`,
    );
    expect(await bot.db.prisma.schedule.count({ where: { id: BigInt(id!) } })).toBe(0);
  });
});
