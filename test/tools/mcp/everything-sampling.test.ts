import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { queryAt } from '../../support/global-db.ts';
import { EVERYTHING_SERVER, startSpool, until } from '../../support/process.ts';

/**
 * The official everything server asks Spool's model (trigger-sampling-request) and for its roots
 * (get-roots-list), each offered as mcp.json says; a server not offered them does not get them.
 */
let fake: FakeOpenAi;
let dir: string;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-sampling-'));
  await mkdir(join(dir, 'project'));
  await mkdir(join(dir, 'notes'));
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [EVERYTHING_SERVER, 'stdio'],
          sampling: { maxTokens: 40, perCall: 1 },
          roots: ['project', { uri: join(dir, 'notes'), name: 'team notes' }],
        },
        plain: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      },
    }),
  );
});
afterAll(async () => {
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

const lastToolResult = (request: ChatRequest) =>
  request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

describe('the everything server, offered sampling and roots', () => {
  it("asks the turn's model within the server's limit, counted as the turn's usage; lists the roots", async () => {
    const bot = startSpool(['chat', '--session', `sampling-${Date.now()}`], {
      env: {
        OPENAI_BASE_URL: fake.baseURL,
        DATABASE_URL: fileDatabaseUrl(),
        MCP_CONFIG: join(dir, 'mcp.json'),
      },
    });
    let stdout = '';
    bot.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const said = (text: string) => until(() => (stdout.includes(text) ? true : undefined), 60_000);
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
      await said('RESULT LLM sampling result');
      await said('Thread wound round and round');
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

      // The roots mcp.json names, folders as file URIs; the server without them lacks the tool.
      fake.enqueue(
        { toolCalls: [{ id: 'r', name: 'everything__get-roots-list', arguments: '{}' }] },
        (request) => ({ content: `ROOTS ${lastToolResult(request)}` }),
      );
      bot.child.stdin.write('list the roots\n');
      await said('ROOTS');
      await said(pathToFileURL(join(dir, 'project')).href);
      await said('team notes');
      const offered = fake.requests.at(-1)!.tools?.map((t) => t.function.name) ?? [];
      expect(offered).toContain('everything__trigger-sampling-request');
      expect(offered).not.toContain('plain__trigger-sampling-request');
      expect(offered).not.toContain('plain__get-roots-list');
    } finally {
      bot.child.stdin.end();
      await bot.done;
    }
  });
});
