import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { onTerminal } from '../../support/terminal.ts';

/** A server of the 2026-07-28 era only: it asks in its results (`input_required`). */
const MODERN = fileURLToPath(new URL('../../fixtures/modern-mcp-server.mjs', import.meta.url));

let fake: FakeOpenAi;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-era-questions-'));
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: { modern: { command: process.execPath, args: [MODERN, 'stdio'] } },
    }),
  );
  env = {
    OPENAI_BASE_URL: fake.baseURL,
    DATABASE_URL: fileDatabaseUrl(),
    MCP_CONFIG: join(dir, 'mcp.json'),
  };
});
afterAll(async () => {
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The model calls `tool` once, then says what it returned. */
function callsOnce(tool: string): void {
  fake.fallback = (request) =>
    request.messages.at(-1)!.role === 'tool'
      ? { content: `tool said: ${request.messages.at(-1)!.content}` }
      : { toolCalls: [{ id: 'ask', name: tool, arguments: '{}' }] };
}

describe('a 2026-07-28 server asking in its result (input_required), on a terminal', () => {
  it('puts the form to the person, and retries the call with their answer and the requestState', async () => {
    callsOnce('modern__sign_up');
    const tty = onTerminal(['chat', '--session', `mrtr-form-${Date.now()}`], env);
    try {
      await tty.waitFor('you › ');
      tty.type('sign me up\r');
      await tty.waitFor('Fill it in? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain('modern asks: Who is signing up?');
      tty.type('y\r');
      await tty.waitFor('Name (required): ');
      tty.type('Ada\r');
      await tty.waitFor(
        'tool said: got {"action":"accept","content":{"name":"Ada"}} with state asked on stdio',
      );
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });
});
