import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { queryAt } from '../../support/global-db.ts';
import {
  EVERYTHING_SERVER,
  startHttpEverything,
  startSpool,
  until,
} from '../../support/process.ts';

/**
 * The official everything server asks Spool's model (trigger-sampling-request) and for its roots
 * (get-roots-list), each offered as mcp.json says, over stdio and Streamable HTTP; a server not
 * offered them does not get them.
 */
let fake: FakeOpenAi;
let dir: string;
let http: { server: ChildProcess; port: number };

/** The everything server twice, once offered sampling and roots, once not. */
const SERVERS = {
  stdio: () => ({
    everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
    plain: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
  }),
  'Streamable HTTP': () => ({
    everything: { url: `http://127.0.0.1:${http.port}/mcp` },
    plain: { url: `http://127.0.0.1:${http.port}/mcp` },
  }),
};

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-sampling-'));
  await mkdir(join(dir, 'project'));
  await mkdir(join(dir, 'notes'));
  http = await startHttpEverything('streamableHttp');
});
afterAll(async () => {
  http?.server.kill();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** mcp.json with `transport`'s servers, the first offered sampling and roots. */
async function mcpJson(transport: keyof typeof SERVERS): Promise<string> {
  const { everything, plain } = SERVERS[transport]();
  const path = join(dir, `mcp-${transport.replace(' ', '-')}.json`);
  await writeFile(
    path,
    JSON.stringify({
      mcpServers: {
        everything: {
          ...everything,
          sampling: { maxTokens: 40, perCall: 1 },
          roots: ['project', { uri: join(dir, 'notes'), name: 'team notes' }],
        },
        plain,
      },
    }),
  );
  return path;
}

const lastToolResult = (request: ChatRequest) =>
  request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

describe.each(Object.keys(SERVERS) as Array<keyof typeof SERVERS>)(
  'the everything server over %s, offered sampling and roots',
  (transport) => {
    it("asks the turn's model within the server's limit, counted as the turn's usage; lists the roots", async () => {
      const bot = startSpool(['chat', '--session', `sampling-${Date.now()}`], {
        env: {
          OPENAI_BASE_URL: fake.baseURL,
          DATABASE_URL: fileDatabaseUrl(),
          MCP_CONFIG: await mcpJson(transport),
        },
      });
      let stdout = '';
      bot.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const said = (text: string) =>
        until(() => (stdout.includes(text) ? true : undefined), 60_000);
      try {
        fake.enqueue(
          {
            toolCalls: [
              {
                id: 's',
                name: 'everything__trigger-sampling-request',
                arguments: '{"prompt":"a line about spools","maxTokens":500}',
              },
            ],
          },
          // The server's own request: its system prompt and words, none of the conversation's.
          (request) => ({
            content:
              request.messages[0]?.content === 'You are a helpful test server.'
                ? 'Thread wound round and round'
                : 'not the server',
          }),
          (request) => ({ content: `RESULT ${lastToolResult(request)}` }),
        );
        bot.child.stdin.write('ask the server to sample\n');
        await said('RESULT');
        // The tool's result, as the model read it, is the server's sampling result: the model's words.
        expect(lastToolResult(fake.requests.at(-1)!)).toContain('LLM sampling result');
        expect(lastToolResult(fake.requests.at(-1)!)).toContain('Thread wound round and round');
        const sampling = fake.requests.at(-2)!;
        expect(sampling.messages.map((m) => m.content)).toEqual([
          'You are a helpful test server.',
          'Resource trigger-sampling-request context: a line about spools',
        ]);
        // Cut to the server's limit in mcp.json.
        expect(sampling.max_tokens ?? sampling.max_completion_tokens).toBe(40);
        // Stored as the turn's usage: all three requests, the server's among them.
        const usage = await queryAt<{ response_id: string }>(
          fileDatabaseUrl(),
          'SELECT response_id FROM llm_usage ORDER BY id',
        );
        expect(usage.map((u) => u.response_id)).toEqual(fake.served.map((s) => s.id));

        // The roots mcp.json names, folders as file URIs, as the server's tool read them back.
        fake.enqueue(
          { toolCalls: [{ id: 'r', name: 'everything__get-roots-list', arguments: '{}' }] },
          (request) => ({ content: `ROOTS ${lastToolResult(request)}` }),
        );
        bot.child.stdin.write('list the roots\n');
        await said('ROOTS');
        const roots = lastToolResult(fake.requests.at(-1)!);
        expect(roots).toContain(pathToFileURL(join(dir, 'project')).href);
        expect(roots).toContain(pathToFileURL(join(dir, 'notes')).href);
        expect(roots).toContain('(2 total)');
        expect(roots).toContain('team notes');
        // The server without them lacks the tools that need them.
        const offered = fake.requests.at(-1)!.tools?.map((t) => t.function.name) ?? [];
        expect(offered).toContain('everything__trigger-sampling-request');
        expect(offered).not.toContain('plain__trigger-sampling-request');
        expect(offered).not.toContain('plain__get-roots-list');
      } finally {
        bot.child.stdin.end();
        await bot.done;
      }
    });
  },
);
