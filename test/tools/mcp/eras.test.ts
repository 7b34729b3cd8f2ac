import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import {
  EVERYTHING_SERVER as EVERYTHING,
  freePort,
  startSpool,
  until,
} from '../../support/process.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

/** A server of the 2026-07-28 era only: it rejects the 2025 `initialize`. */
const MODERN = fileURLToPath(new URL('../../fixtures/modern-mcp-server.mjs', import.meta.url));

let fake: FakeOpenAi;
let dir: string;
let httpServer: ChildProcess;
let requestsFile: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-eras-'));
  requestsFile = join(dir, 'requests.log');
  const mcpPort = await freePort();
  httpServer = spawn(process.execPath, [MODERN, 'http', String(mcpPort)], {
    env: { ...process.env, REQUESTS_FILE: requestsFile },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${mcpPort}/mcp`;
  await until(() =>
    fetch(url, { method: 'POST' }).then(
      () => true,
      () => undefined,
    ),
  );
  // The same mcp.json holds servers of both eras: 2026 over HTTP and stdio, 2025 over stdio.
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        modern: { url },
        local: { command: process.execPath, args: [MODERN, 'stdio'] },
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    }),
  );
  env = {
    OPENAI_BASE_URL: fake.baseURL,
    DATABASE_URL: fileDatabaseUrl(),
    MCP_CONFIG: join(dir, 'mcp.json'),
    LOG_FORMAT: 'json',
  };
});
afterAll(async () => {
  httpServer.kill();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The results of the last request's tool calls, in the order the model made them. */
const toolResults = (request: ChatRequest, count: number) =>
  request.messages
    .filter((m) => m.role === 'tool')
    .slice(-count)
    .map((m) => m.content)
    .join(' | ');

describe('servers of the 2026-07-28 era beside servers of the 2025-11-25 era', () => {
  it('calls the tools of each in its own era, follows their tool list changes, and shows the era on /readyz', async () => {
    const port = await freePort();
    const bot = startSpool(['chat', '--session', `eras-${Date.now()}`], {
      env: { ...env, PORT: String(port) },
    });
    let stdout = '';
    bot.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const readyz = async () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.text(),
        () => '',
      );
    const said = (line: string) => until(() => (stdout.includes(`${line}\n`) ? true : undefined));

    // Connected (each server's first attempt made): each server's era on /readyz, a line each.
    const ready = await until(async () => {
      const body = await readyz();
      return (body.match(/^MCP server "\w+": /gm) ?? []).length === 3 ? body : undefined;
    });
    expect(ready).toContain('MCP server "modern": ready, MCP 2026-07-28, 4 tools\n');
    expect(ready).toContain('MCP server "local": ready, MCP 2026-07-28, 4 tools\n');
    expect(ready).toMatch(/MCP server "everything": ready, MCP 2025-11-25, \d+ tools\n/);

    // A call to each server, in one step.
    fake.enqueue(
      {
        toolCalls: [
          { id: 'a', name: 'modern__echo', arguments: '{"text":"one"}' },
          { id: 'b', name: 'local__echo', arguments: '{"text":"two"}' },
          { id: 'c', name: 'everything__echo', arguments: '{"message":"three"}' },
        ],
      },
      (request) => ({ content: toolResults(request, 3) }),
    );
    bot.child.stdin.write('echo everywhere\n');
    await said('http echo: one | stdio echo: two | Echo: three');

    // Each 2026 server adds a tool and says its list changed: the bot lists it again.
    fake.enqueue(
      {
        toolCalls: [
          { id: 'd', name: 'modern__add_tool', arguments: '{"name":"sum"}' },
          { id: 'e', name: 'local__add_tool', arguments: '{"name":"sum"}' },
        ],
      },
      (request) => ({ content: toolResults(request, 2) }),
    );
    bot.child.stdin.write('add a tool\n');
    await said('added sum | added sum');
    await until(async () => {
      const body = await readyz();
      return body.includes('MCP server "modern": ready, MCP 2026-07-28, 5 tools\n') &&
        body.includes('MCP server "local": ready, MCP 2026-07-28, 5 tools\n')
        ? true
        : undefined;
    });

    // The next request offers the new tools, and they run.
    let offered: string[] = [];
    fake.enqueue(
      (request) => {
        offered = (request.tools ?? []).map((t) => t.function.name);
        return {
          toolCalls: [
            { id: 'f', name: 'modern__sum', arguments: '{}' },
            { id: 'g', name: 'local__sum', arguments: '{}' },
          ],
        };
      },
      (request) => ({ content: toolResults(request, 2) }),
    );
    bot.child.stdin.write('use it\n');
    await said('sum ran on http | sum ran on stdio');
    expect(offered).toEqual(expect.arrayContaining(['modern__sum', 'local__sum']));

    bot.child.stdin.end();
    const { code, stderr } = await bot.done;
    expect(code).toBe(0);
    expect(fake.rejections).toEqual([]);

    // The era each server speaks, logged at connect: a structured line per server.
    const connected = stderr
      .split('\n')
      .filter((line) => line.includes('"protocolVersion"'))
      .map((line) => {
        const { server, protocolVersion, era } = JSON.parse(line) as Record<string, string>;
        return { server, protocolVersion, era };
      });
    expect(connected).toEqual(
      expect.arrayContaining([
        { server: 'modern', protocolVersion: '2026-07-28', era: 'modern' },
        { server: 'local', protocolVersion: '2026-07-28', era: 'modern' },
        { server: 'everything', protocolVersion: '2025-11-25', era: 'legacy' },
      ]),
    );
    expect(connected).toHaveLength(3);

    // On the wire to the HTTP server: no initialize; each request names its method (and a call
    // its tool) in headers, at 2026-07-28.
    const wire = (await readFile(requestsFile, 'utf8')).trim().split('\n');
    expect(wire[0]).toBe(
      'server/discover mcp-method=server/discover mcp-name= mcp-protocol-version=2026-07-28',
    );
    expect(wire.filter((line) => line.startsWith('initialize'))).toEqual([]);
    expect(wire).toEqual(
      expect.arrayContaining([
        'subscriptions/listen mcp-method=subscriptions/listen mcp-name= mcp-protocol-version=2026-07-28',
        'tools/call mcp-method=tools/call mcp-name=echo mcp-protocol-version=2026-07-28',
        'tools/call mcp-method=tools/call mcp-name=add_tool mcp-protocol-version=2026-07-28',
        'tools/call mcp-method=tools/call mcp-name=sum mcp-protocol-version=2026-07-28',
      ]),
    );
  });
});
