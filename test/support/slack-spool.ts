import { expect } from 'vitest';
import { SlackAdapter } from '../../src/adapters/slack/slack-adapter.ts';
import type { SlackAdapterConfig } from '../../src/adapters/slack/parts.ts';
import type { DeliveryEngine } from '../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../src/store/database.ts';
import type { Tool } from '../../src/core/ports/tools.ts';
import { testAgent } from './agent.ts';
import { testDatabase, testEngine, testStore } from './db.ts';
import { FakeOpenAi } from './fake-openai.ts';
import { FakeSlack, signedRequest } from './fake-slack.ts';
import { silentLogger } from './logger.ts';
import { freePort } from './process.ts';
import { serveSlackEvents, SIGNING_SECRET } from './slack-bot.ts';

/** An in-process Slack adapter with its Events API served, and signed posts to it as Slack makes them. */
export interface ServedSlackAdapter {
  adapter: SlackAdapter;
  /** Where its Events API listens (none is served in Socket Mode). */
  port: number;
  /** POSTs `body` to the Events API, signed with the adapter's secret. */
  post(body: string, contentType: string, headers?: Record<string, string>): Promise<Response>;
  /** An Events API payload (an event, or the URL check), as JSON. */
  event(body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** A slash command's fields, form-encoded. */
  command(fields: Record<string, string>): Promise<Response>;
  /** An interaction's payload (a click, a submitted form), form-encoded as Slack sends it. */
  interaction(payload: unknown): Promise<Response>;
  /** Stops the adapter and the engine, and closes the Events API's server. */
  stop(): Promise<void>;
}

/**
 * A SlackAdapter over `engine` (token "xoxb-test" and the bot's SIGNING_SECRET, so `deliver`
 * reaches it too, unless `config` says otherwise), its Events API served as `npm start` mounts it
 * (except in Socket Mode, `appToken`); the engine is started once the adapter is.
 */
export async function serveSlackAdapter(
  engine: DeliveryEngine,
  config: SlackAdapterConfig,
): Promise<ServedSlackAdapter> {
  const signingSecret = config.signingSecret ?? SIGNING_SECRET;
  const adapter = new SlackAdapter(
    {
      botToken: 'xoxb-test',
      ...(config.appToken ? {} : { signingSecret }),
      ...config,
    },
    engine,
    silentLogger,
  );
  await adapter.start();
  const port = await freePort();
  const server = config.appToken ? undefined : await serveSlackEvents(adapter, port);
  engine.start();
  const post = (body: string, contentType: string, headers: Record<string, string> = {}) =>
    fetch(
      `http://127.0.0.1:${port}/slack/events`,
      signedRequest(body, signingSecret, contentType, headers),
    );
  return {
    adapter,
    port,
    post,
    event: (body, headers) => post(JSON.stringify(body), 'application/json', headers),
    command: (fields) =>
      post(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'),
    interaction: (payload) =>
      post(
        new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
        'application/x-www-form-urlencoded',
      ),
    stop: async () => {
      await adapter.stop();
      await engine.stop(0);
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    },
  };
}

/** Expects Slack's request to have been acknowledged (HTTP 200), its body read to the end. */
export async function expectAcknowledged(response: Promise<Response>): Promise<void> {
  const answered = await response;
  await answered.arrayBuffer();
  expect(answered.status).toBe(200);
}

/**
 * A whole Spool on Slack in this process: the test database, the fake model (with `tools`), a fake
 * Slack's Web API, the delivery engine (`engine` options and `deps`) and its adapter (`adapter`
 * settings), served as in {@link serveSlackAdapter}. `close` stops all of them.
 */
export interface SlackSpool extends ServedSlackAdapter {
  db: Database;
  llm: FakeOpenAi;
  slack: FakeSlack;
  engine: DeliveryEngine;
  close(): Promise<void>;
}

export async function startSlackSpool(
  options: {
    tools?: Tool[];
    engine?: Parameters<typeof testEngine>[2];
    /** The engine's parts besides the test's own, made over the database. */
    deps?: (db: Database) => Parameters<typeof testEngine>[3];
    adapter?: SlackAdapterConfig;
    /** A database the test opened itself (and closes); by default the test database, closed here. */
    db?: Database;
  } = {},
): Promise<SlackSpool> {
  const db = options.db ?? (await testDatabase());
  const [llm, slack] = await Promise.all([new FakeOpenAi().start(), new FakeSlack().start()]);
  const engine = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db), tools: options.tools ?? [] }),
    options.engine,
    options.deps?.(db),
  );
  const served = await serveSlackAdapter(engine, { apiUrl: slack.apiUrl, ...options.adapter });
  return {
    ...served,
    db,
    llm,
    slack,
    engine,
    close: async () => {
      await served.stop();
      await Promise.all([slack.stop(), llm.stop()]);
      if (!options.db) await db.close();
    },
  };
}
