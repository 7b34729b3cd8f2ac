import type { Server } from 'node:http';
import type { SlackAdapter } from '../../src/adapters/slack/slack-adapter.ts';
import { serveRoutes } from '../../src/observability.ts';
import { type ChatRequest, lastUserText, type ScriptedReply } from './fake-openai.ts';
import { signedRequest } from './fake-slack.ts';
import { EVERYTHING_SERVER, startSpool, type SpoolProcess } from './process.ts';

export const SIGNING_SECRET = 'bot-process-signing-secret';
export const SLOW_TOOL = 'slow__trigger-long-running-operation';

/** An mcpServers config with the official everything server, whose slow tool the model calls. */
export const slowToolConfig = () =>
  JSON.stringify({
    mcpServers: { slow: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } },
  });

/**
 * A stateless model, so any number of processes and restarts can share it: a new question gets
 * one call of the slow tool (numbered "call_0", as some servers do), a tool result gets
 * "answer to <the newest question>".
 */
export function slowToolModel(seconds: number): (request: ChatRequest) => ScriptedReply {
  return (request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user')
      return {
        toolCalls: [
          {
            id: 'call_0',
            name: SLOW_TOOL,
            arguments: JSON.stringify({ duration: seconds, steps: 1 }),
          },
        ],
      };
    const question = lastUserText(request);
    return { content: `answer to ${question}` };
  };
}

/** POSTs a signed Events API request; true when the bot acknowledged it (HTTP 200). */
export async function deliver(
  port: number,
  body: Record<string, unknown>,
  retryNum = 0,
): Promise<boolean> {
  const headers: Record<string, string> =
    retryNum > 0
      ? { 'x-slack-retry-num': String(retryNum), 'x-slack-retry-reason': 'http_timeout' }
      : {};
  try {
    const response = await fetch(
      `http://127.0.0.1:${port}/slack/events`,
      signedRequest(JSON.stringify(body), SIGNING_SECRET, 'application/json', headers),
    );
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false; // not listening (starting, or killed)
  }
}

/**
 * `npm start` in Slack HTTP mode on `port`; resolves once it answers Slack's URL check. The
 * process is killed after `timeoutMs` (ten minutes unless told): a run longer than that says so.
 */
export async function startSlackBot(
  port: number,
  env: Record<string, string>,
  options: { nodeArgs?: string[]; group?: boolean; timeoutMs?: number } = {},
): Promise<SpoolProcess> {
  const bot = startSpool([], {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-bot-process',
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      PORT: String(port),
      ...env,
    },
    timeoutMs: options.timeoutMs ?? 600_000,
    nodeArgs: options.nodeArgs ?? [],
    group: options.group ?? false,
  });
  bot.done.catch(() => {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await deliver(port, { type: 'url_verification', challenge: 'ready', token: 't' }))
      return bot;
    if (bot.child.exitCode !== null || Date.now() > deadline)
      throw new Error(
        `the bot did not start: ${JSON.stringify(await bot.done.catch((e: Error) => e.message))}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * An in-process adapter's Events API on `port`, mounted as `npm start` mounts it on the bot's HTTP
 * server.
 */
export async function serveSlackEvents(adapter: SlackAdapter, port: number): Promise<Server> {
  const endpoint = await serveRoutes(port, []);
  endpoint.mount(adapter.httpHandler()!);
  return endpoint.server;
}
