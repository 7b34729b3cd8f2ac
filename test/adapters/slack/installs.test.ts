import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  SlackAdapter,
  type SlackAdapterConfig,
} from '../../../src/adapters/slack/slack-adapter.ts';
import { DEFAULT_INSTALL_SCOPES } from '../../../src/adapters/slack/settings.ts';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import type { DeliveryOptions } from '../../../src/core/delivery/engine/engine-options.ts';
import type { Database } from '../../../src/store/database.ts';
import { SlackInstallations } from '../../../src/store/credentials/slack-installations.ts';
import { SlackInstallStates } from '../../../src/store/credentials/slack-install-states.ts';
import { testAgent, testTool } from '../../support/agent.ts';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { eventBody, FakeSlack, signedRequest, SLACK_CLIENT } from '../../support/fake-slack.ts';
import { FakeSlackInstalls, SLACK_WORKSPACE_COOKIE } from '../../support/fake-slack-installs.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { freePort, until } from '../../support/process.ts';
import { serveSlackEvents } from '../../support/slack-bot.ts';
import { refreshBotToken } from '../../../src/adapters/slack/installs/rotation.ts';

const SIGNING_SECRET = 'installs-signing-secret';
const KEY = Buffer.alloc(32, 7);

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let installs: FakeSlackInstalls;

/** A tool that runs until its turn is ended: when it started and when it was ended. */
const held: Array<{ startedAt: number; endedAt?: number }> = [];
const hold = testTool(
  'hold',
  (_args, { signal }) =>
    new Promise((resolve) => {
      const run: (typeof held)[number] = { startedAt: Date.now() };
      held.push(run);
      signal.addEventListener('abort', () => {
        run.endedAt = Date.now();
        resolve({ content: 'ended', isError: true });
      });
    }),
);

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
  installs = new FakeSlackInstalls(slack);
  const said = (r: ChatRequest) =>
    r.messages.filter((m) => m.role === 'user').map((m) => m.content);
  // Every question the model has seen in this conversation, so crossing would show; "hold" asks
  // for the tool that holds the turn until it is ended.
  llm.fallback = (request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user' && String(last.content).includes('hold'))
      return { toolCalls: [{ id: 'call_hold', name: 'hold', arguments: '{}' }] };
    return { content: `seen: ${said(request).join(' | ')}` };
  };
});
afterAll(async () => {
  await slack.stop();
  await llm.stop();
  await db.close();
});

interface Started {
  port: number;
  base: string;
  logger: RecordingLogger;
  store: SlackInstallations;
  pipeline: DeliveryEngine;
  stop(): Promise<void>;
}

async function startSpool(
  overrides: Partial<SlackAdapterConfig['installs']> = {},
  engine: Partial<DeliveryOptions> = {},
): Promise<Started> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const logger = new RecordingLogger();
  const clientOptions = { slackApiUrl: `${slack.apiUrl}/` };
  const store = new SlackInstallations(db.prisma, {
    key: KEY,
    refresh: refreshBotToken({
      clientId: SLACK_CLIENT.id,
      clientSecret: SLACK_CLIENT.secret,
      clientOptions,
    }),
  });
  const agent = testAgent({ fake: llm, store: testStore(db), tools: [hold] });
  const pipeline = testEngine(db, agent, engine, { schedules: new ScheduleLedger(db.prisma) });
  const adapter = new SlackAdapter(
    {
      signingSecret: SIGNING_SECRET,
      apiUrl: slack.apiUrl,
      clientId: SLACK_CLIENT.id,
      clientSecret: SLACK_CLIENT.secret,
      installs: {
        scopes: DEFAULT_INSTALL_SCOPES,
        redirectUrl: `${base}/slack/oauth_redirect`,
        adminInstallsWithoutState: false,
        ...overrides,
      },
      installationStore: store,
      stateStore: new SlackInstallStates(db.prisma),
    },
    pipeline,
    logger,
  );
  await adapter.start();
  const server: Server = await serveSlackEvents(adapter, port);
  pipeline.start();
  return {
    port,
    base,
    logger,
    store,
    pipeline,
    stop: async () => {
      await Promise.all([adapter.stop(), pipeline.stop(0)]);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A browser's cookies, kept across requests as a browser keeps them. */
class Browser {
  readonly cookies = new Map<string, string>();
  constructor(workspace?: string) {
    if (workspace) this.cookies.set(SLACK_WORKSPACE_COOKIE, encodeURIComponent(workspace));
  }
  async get(url: string): Promise<Response> {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const [name, value = ''] = pair!.split('=');
      this.cookies.set(name!, value);
    }
    return res;
  }
}

/**
 * "Add to Slack" in a browser: Spool's install page, its link to Slack's authorize page (whose
 * cookie says which workspace installs), and Slack's redirect back to Spool.
 */
async function install(
  spool: Started,
  browser: Browser,
): Promise<{ redirect: string; page: Response }> {
  const landing = await (await browser.get(`${spool.base}/slack/install`)).text();
  const authorize = /<a href="([^"]+)"/.exec(landing)![1]!.replaceAll('&amp;', '&');
  const back = await browser.get(authorize);
  const redirect = back.headers.get('location')!;
  return { redirect, page: await browser.get(redirect) };
}

const post = (spool: Started, body: Record<string, unknown>) =>
  fetch(
    `${spool.base}/slack/events`,
    signedRequest(JSON.stringify(body), SIGNING_SECRET, 'application/json'),
  );

/** A message event in a workspace, named by its `authorizations` as Slack does. */
function messageIn(
  team: string,
  text: string,
  channel = 'C1',
  ts = `${Date.now() / 1000}`,
  thread?: string,
) {
  const body = eventBody({
    type: 'message',
    channel_type: 'im',
    channel,
    user: 'U1',
    text,
    ts,
    ...(thread ? { thread_ts: thread } : {}),
  });
  return {
    ...body,
    team_id: team,
    authorizations: [{ team_id: team, user_id: 'UBOT', is_bot: true }],
  };
}

/** An event from a workspace of an organization whose install is org-wide, as Slack sends it. */
function inOrganization<T extends { team_id: string }>(enterprise: string, body: T) {
  return {
    ...body,
    enterprise_id: enterprise,
    is_ext_shared_channel: false,
    authorizations: [
      {
        enterprise_id: enterprise,
        team_id: body.team_id,
        user_id: 'UBOT',
        is_bot: true,
        is_enterprise_install: true,
      },
    ],
  };
}

/** Slack's `app_uninstalled`, for a workspace or (with `enterprise`) an org-wide install. */
function uninstallEvent(team: string, at: number, enterprise?: string) {
  const body = {
    token: 'verification-token',
    team_id: team,
    api_app_id: 'A1',
    event: { type: 'app_uninstalled', event_ts: `${at / 1000}` },
    type: 'event_callback',
    event_id: `EvUninstall${team}${at}`,
    event_time: Math.floor(at / 1000),
    authorizations: [{ team_id: team, user_id: 'UBOT', is_bot: true }],
  };
  return enterprise ? inOrganization(enterprise, body) : body;
}

/** A daily schedule of U1's in a workspace's channel, stored as `schedule` stores it. */
const scheduleIn = (workspace: string, channel = 'C1', prompt = 'news') =>
  db.prisma.schedule.create({
    data: {
      platform: 'slack',
      workspace,
      channel,
      owner: 'U1',
      rule: 'every day at 9:00',
      timeZone: 'UTC',
      prompt,
    },
  });

/** `/spool TEXT` from U1 in a workspace's channel: what it answered, through its response URL. */
async function spoolCommand(spool: Started, team: string, channel: string, text: string) {
  const id = `${team}-${randomUUID()}`;
  await fetch(
    `${spool.base}/slack/events`,
    signedRequest(
      new URLSearchParams({
        command: '/spool',
        text,
        team_id: team,
        channel_id: channel,
        user_id: 'U1',
        response_url: slack.responseUrl(id),
        trigger_id: 't',
      }).toString(),
      SIGNING_SECRET,
      'application/x-www-form-urlencoded',
    ),
  );
  return until(() => slack.responses(id)[0]);
}

const postsIn = (team: string) =>
  slack.calls.filter((c) => c.method === 'chat.postMessage' && installs.teamOf(c.token) === team);

describe('Slack installs (Add to Slack) through Bolt’s InstallProvider', () => {
  let spool: Started;
  afterEach(async () => spool?.stop());

  it('installs a workspace with no restart: its first message is answered with its own token, sealed at rest', async () => {
    spool = await startSpool();
    const started = Date.now();
    const { page } = await install(spool, new Browser('TINSTALL'));
    expect(page.status).toBe(200);
    const row = await db.prisma.slackInstallation.findUniqueOrThrow({
      where: { id: 'team:TINSTALL' },
    });
    const token = (await spool.store.forWorkspace('TINSTALL')).bot!.token!;
    expect(token).toMatch(/^xoxb-TINSTALL-/);
    // Sealed: the token is nowhere in the row.
    expect(JSON.stringify(row)).not.toContain(token);

    expect((await post(spool, messageIn('TINSTALL', 'hello after install'))).status).toBe(200);
    await until(() => postsIn('TINSTALL')[0]);
    const installToAnswerMs = Date.now() - started;
    expect(String(postsIn('TINSTALL')[0]!.args.text)).toContain('hello after install');
    console.log(`install → first answer: ${installToAnswerMs} ms`);
    // No secret in any log line, trace included.
    expect(JSON.stringify(spool.logger.lines)).not.toContain(token);
    expect(JSON.stringify(spool.logger.lines)).not.toContain(SLACK_CLIENT.secret);
  });

  it('refuses a replayed redirect, a state from another browser, and a redirect with no state; stores nothing', async () => {
    spool = await startSpool();
    const browser = new Browser('TREPLAY');
    const { redirect, page } = await install(spool, browser);
    expect(page.status).toBe(200);
    await db.prisma.slackInstallation.delete({ where: { id: 'team:TREPLAY' } });

    // The same redirect again, from the same browser: the state was used.
    const replayed = await browser.get(redirect);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toMatch(
      /used already, has expired, or was opened in another browser/,
    );

    // A fresh link, but Slack's redirect followed in another browser.
    const other = new Browser('TOTHER');
    const landing = await (await other.get(`${spool.base}/slack/install`)).text();
    const authorize = /<a href="([^"]+)"/.exec(landing)![1]!.replaceAll('&amp;', '&');
    const back = (await other.get(authorize)).headers.get('location')!;
    const elsewhere = await new Browser().get(back);
    expect(elsewhere.status).toBe(400);

    // An admin's org-wide approval, no state: refused unless the operator opts in.
    const code = installs.adminApproval({ team: 'TADMIN', enterprise: 'EADMIN', orgWide: true });
    const stateless = await new Browser().get(`${spool.base}/slack/oauth_redirect?code=${code}`);
    expect(stateless.status).toBe(400);
    expect(await stateless.text()).toMatch(/SLACK_ADMIN_INSTALLS_WITHOUT_STATE/);

    expect(
      await db.prisma.slackInstallation.count({
        where: { id: { in: ['team:TREPLAY', 'team:TOTHER', 'enterprise:EADMIN'] } },
      }),
    ).toBe(0);
  });

  it('refuses a workspace outside the allow-list, and gives its token back', async () => {
    spool = await startSpool({ allowedWorkspaces: ['TALLOWED'] });
    const refused = await install(spool, new Browser('TBARRED'));
    expect(refused.page.status).toBe(400);
    expect(await refused.page.text()).toMatch(/may not install Spool/);
    expect(await db.prisma.slackInstallation.count({ where: { id: 'team:TBARRED' } })).toBe(0);
    expect(
      slack.calls.some((c) => c.method === 'auth.revoke' && installs.teamOf(c.token) === 'TBARRED'),
    ).toBe(true);
    expect((await install(spool, new Browser('TALLOWED'))).page.status).toBe(200);
  });

  it('takes an org-wide install keyed by its organization when the operator opts in; its workspaces are answered', async () => {
    spool = await startSpool({ adminInstallsWithoutState: true });
    const code = installs.adminApproval({ team: 'TGRID1', enterprise: 'EGRID', orgWide: true });
    const page = await new Browser().get(`${spool.base}/slack/oauth_redirect?code=${code}`);
    expect(page.status).toBe(200);
    expect(await db.prisma.slackInstallation.count({ where: { id: 'enterprise:EGRID' } })).toBe(1);
    const body = inOrganization('EGRID', messageIn('TGRID1', 'hello from the grid'));
    expect((await post(spool, body)).status).toBe(200);
    const answer = await until(() =>
      slack.calls.find(
        (c) =>
          c.method === 'chat.postMessage' && String(c.args.text).includes('hello from the grid'),
      ),
    );
    expect(installs.teamOf(answer.token)).toBe('TGRID1');
  });

  it('an event for a workspace with no installation: logged, nothing posted, the others answered', async () => {
    spool = await startSpool();
    await install(spool, new Browser('TLIVE'));
    expect((await post(spool, messageIn('TNEVER', 'anyone there?'))).status).toBe(200);
    expect((await post(spool, messageIn('TLIVE', 'still here?'))).status).toBe(200);
    await until(() => postsIn('TLIVE').find((c) => String(c.args.text).includes('still here?')));
    expect(slack.calls.some((c) => String(c.args.text ?? '').includes('anyone there?'))).toBe(
      false,
    );
    expect(spool.logger.lines.some((l) => /TNEVER/.test(JSON.stringify(l)))).toBe(true);
  });

  it('an uninstall ends that workspace’s running turn with nothing posted and pauses its schedules; the other goes on; a reinstall resumes', async () => {
    spool = await startSpool();
    await install(spool, new Browser('TGONE'));
    await install(spool, new Browser('TSTAY'));
    const [gone, stay] = [await scheduleIn('TGONE'), await scheduleIn('TSTAY')];
    const running = held.length;
    expect((await post(spool, messageIn('TGONE', 'please hold on'))).status).toBe(200);
    await until(() => held[running]);

    // Slack revokes the tokens, then sends app_uninstalled (Bolt authorizes neither).
    installs.uninstall('TGONE');
    const uninstalledAt = Date.now();
    expect((await post(spool, uninstallEvent('TGONE', uninstalledAt))).status).toBe(200);
    const endedAt = await until(() => held[running]!.endedAt);
    const silenceMs = endedAt - uninstalledAt;
    console.log(`uninstall → silence: ${silenceMs} ms`);
    expect(silenceMs).toBeLessThanOrEqual(1000);
    expect(await db.prisma.slackInstallation.count({ where: { id: 'team:TGONE' } })).toBe(0);

    // The other workspace is answered; by then, nothing was posted for the uninstalled one.
    expect((await post(spool, messageIn('TSTAY', 'still with us?'))).status).toBe(200);
    await until(() => postsIn('TSTAY').find((c) => String(c.args.text).includes('still with us?')));
    const gonePosts = slack.calls.filter(
      (c) => c.at >= uninstalledAt && installs.teamOf(c.token) === 'TGONE',
    );
    expect(gonePosts).toEqual([]);
    const pausedOf = async (id: bigint) =>
      (await db.prisma.schedule.findUniqueOrThrow({ where: { id } })).pausedReason;
    expect(await pausedOf(gone.id)).toBe('uninstalled');
    expect(await pausedOf(stay.id)).toBeNull();

    // Installed again: answered with the new token, the schedule runs again.
    await install(spool, new Browser('TGONE'));
    expect(await pausedOf(gone.id)).toBeNull();
    expect((await post(spool, messageIn('TGONE', 'back again', 'C9'))).status).toBe(200);
    await until(() => postsIn('TGONE').find((c) => String(c.args.text).includes('back again')));
  });

  it('an org-wide uninstall ends every workspace of the organization; another install goes on; a reinstall resumes them all', async () => {
    spool = await startSpool({ adminInstallsWithoutState: true });
    const approve = () =>
      new Browser().get(
        `${spool.base}/slack/oauth_redirect?code=${installs.adminApproval({ team: 'TORG1', enterprise: 'EORG', orgWide: true })}`,
      );
    expect((await approve()).status).toBe(200);
    await install(spool, new Browser('TOUTSIDE'));
    // Each workspace of the organization is seen through an event of its own.
    for (const team of ['TORG1', 'TORG2']) {
      const channel = `CSEEN${team}`;
      await post(spool, inOrganization('EORG', messageIn(team, `hello from ${team}`, channel)));
      await until(() =>
        slack.calls.find(
          (c) =>
            c.method === 'chat.postMessage' && String(c.args.text).includes(`hello from ${team}`),
        ),
      );
    }
    const [first, second, outside] = [
      await scheduleIn('TORG1'),
      await scheduleIn('TORG2'),
      await scheduleIn('TOUTSIDE'),
    ];
    const running = held.length;
    const heldChannel = `CHOLD${Date.now()}`;
    await post(spool, inOrganization('EORG', messageIn('TORG2', 'please hold on', heldChannel)));
    await until(() => held[running]);

    // The organization's uninstall names one workspace; both end.
    installs.uninstall('EORG');
    const uninstalledAt = Date.now();
    expect((await post(spool, uninstallEvent('TORG1', uninstalledAt, 'EORG'))).status).toBe(200);
    await until(() => held[running]!.endedAt);
    expect(await db.prisma.slackInstallation.count({ where: { id: 'enterprise:EORG' } })).toBe(0);
    const pausedOf = async (id: bigint) =>
      (await db.prisma.schedule.findUniqueOrThrow({ where: { id } })).pausedReason;
    expect([await pausedOf(first.id), await pausedOf(second.id)]).toEqual([
      'uninstalled',
      'uninstalled',
    ]);
    expect(await pausedOf(outside.id)).toBeNull();

    // The other install is answered; by then nothing was posted in the held turn's channel.
    expect((await post(spool, messageIn('TOUTSIDE', 'still on?'))).status).toBe(200);
    await until(() => postsIn('TOUTSIDE').find((c) => String(c.args.text).includes('still on?')));
    expect(
      slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === heldChannel),
    ).toEqual([]);

    // Approved again: every workspace of the organization runs its schedules again.
    expect((await approve()).status).toBe(200);
    expect([await pausedOf(first.id), await pausedOf(second.id)]).toEqual([null, null]);
  });

  it('keeps two workspaces with the same channel, thread and user ids apart: messages, answers, recalls, usage', async () => {
    spool = await startSpool();
    await install(spool, new Browser('TAPART'));
    await install(spool, new Browser('TBPART'));
    // The same channel, thread ts and user in both workspaces.
    const ts = `${Math.floor(Date.now() / 1000)}.000100`;
    const channel = `CSAME${Date.now()}`;
    await post(spool, messageIn('TAPART', 'alpha plans', channel, ts));
    await post(spool, messageIn('TBPART', 'bravo plans', channel, ts));
    const answer = (team: string, words: string) =>
      until(() => postsIn(team).find((c) => String(c.args.text).includes(words)));
    await Promise.all([answer('TAPART', 'alpha plans'), answer('TBPART', 'bravo plans')]);
    // Follow-ups in the "same" thread: each model sees its own workspace's messages only.
    const followUp = (team: string, text: string) =>
      messageIn(team, text, channel, `${Number(ts) + 1}`, ts);
    await post(spool, followUp('TAPART', 'alpha again'));
    await post(spool, followUp('TBPART', 'bravo again'));
    const [a, b] = await Promise.all([
      answer('TAPART', 'alpha again'),
      answer('TBPART', 'bravo again'),
    ]);
    expect(String(a.args.text)).toContain('alpha plans');
    expect(String(a.args.text)).not.toContain('bravo');
    expect(String(b.args.text)).toContain('bravo plans');
    expect(String(b.args.text)).not.toContain('alpha');

    // /spool recall in the other workspace's "same" channel finds nothing of this one.
    const other = await spoolCommand(spool, 'TBPART', channel, 'recall alpha');
    expect(await spoolCommand(spool, 'TAPART', channel, 'recall alpha')).toContain('alpha plans');
    expect(other).toMatch(/No earlier messages/);
    expect(other).not.toContain('alpha plans');

    // Conversations and usage rows: one set per workspace.
    for (const workspace of ['TAPART', 'TBPART']) {
      expect(
        await db.prisma.conversation.count({ where: { platform: 'slack', workspace, channel } }),
      ).toBe(1);
      expect(
        await db.prisma.llmUsage.count({ where: { platform: 'slack', workspace, channel } }),
      ).toBe(2);
    }
  });
  it('keeps caps and schedules apart: a cap reached in one workspace holds nothing of the other’s same channel and person; each lists its own schedules', async () => {
    const cap = (per: 'channel' | 'user' | 'workspace') => ({
      per,
      period: 'day' as const,
      tokens: 1_000_000,
    });
    spool = await startSpool({}, { policy: { rules: [], caps: [cap('channel'), cap('user')] } });
    await install(spool, new Browser('TCAPA'));
    await install(spool, new Browser('TCAPB'));
    const channel = `CCAP${Date.now()}`;
    // Workspace A's channel, and its person U1, spent past their caps today.
    const conversation = await db.prisma.conversation.create({
      data: { platform: 'slack', workspace: 'TCAPA', channel, thread: 'spent' },
    });
    await db.prisma.llmUsage.create({
      data: {
        conversationId: conversation.id,
        platform: 'slack',
        workspace: 'TCAPA',
        channel,
        userId: 'U1',
        model: 'gpt-4o-mini',
        promptTokens: 1_500_000,
        completionTokens: 0,
        totalTokens: 1_500_000,
      },
    });
    await scheduleIn('TCAPA', channel, 'alpha digest');
    await post(spool, messageIn('TCAPA', 'alpha over the cap?', channel));
    await post(spool, messageIn('TCAPB', 'bravo under the cap?', channel));
    const capped = await until(() =>
      postsIn('TCAPA').find((c) => /reached its cap/.test(String(c.args.text))),
    );
    const answered = await until(() =>
      postsIn('TCAPB').find((c) => String(c.args.text).includes('bravo under the cap?')),
    );
    expect(String(capped.args.text)).not.toContain('seen:');
    expect(String(answered.args.text)).not.toMatch(/reached its cap/);

    // `/spool schedule list` in the "same" channel of each workspace.
    expect(await spoolCommand(spool, 'TCAPA', channel, 'schedule list')).toContain('alpha digest');
    expect(await spoolCommand(spool, 'TCAPB', channel, 'schedule list')).not.toContain(
      'alpha digest',
    );
  });
});
