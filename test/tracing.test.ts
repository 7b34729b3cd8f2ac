import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAi } from './support/fake-openai.ts';
import { readBody } from './support/http.ts';
import { freePort, runSpool, until } from './support/process.ts';
import { fileDatabaseUrl } from './support/file-database.ts';

/** A span as an OTLP/HTTP receiver gets it, its attributes as plain values. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  status: { code?: number };
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

function plain(value: OtlpValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** An OTLP/HTTP receiver: what OTEL_EXPORTER_OTLP_ENDPOINT points at, keeping every span posted. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        this.take(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  private take(request: {
    resourceSpans: Array<{
      scopeSpans: Array<{
        spans: Array<
          Omit<ReceivedSpan, 'attributes'> & {
            attributes?: Array<{ key: string; value: OtlpValue }>;
          }
        >;
      }>;
    }>;
  }): void {
    for (const { scopeSpans } of request.resourceSpans)
      for (const { spans } of scopeSpans)
        for (const span of spans)
          this.spans.push({
            ...span,
            attributes: Object.fromEntries(
              (span.attributes ?? []).map(({ key, value }) => [key, plain(value)]),
            ),
          });
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** A JSON-RPC request an MCP server received, with the trace header it came with. */
interface McpRequest {
  method: string;
  params?: { name?: string; _meta?: Record<string, unknown> };
  traceparent?: string;
}

/** An MCP server over Streamable HTTP with one tool, keeping every request it is sent. */
async function startMcpServer(): Promise<{
  url: string;
  requests: McpRequest[];
  stop(): Promise<void>;
}> {
  const requests: McpRequest[] = [];
  const handle = async (
    req: IncomingMessage,
    res: Parameters<StreamableHTTPServerTransport['handleRequest']>[1],
  ) => {
    const body = req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined;
    for (const message of [body ?? []].flat())
      requests.push({ ...message, traceparent: req.headers.traceparent as string | undefined });
    const server = new McpServer(
      { name: 'lookup', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: 'lookup',
          description: 'Looks a key up',
          inputSchema: { type: 'object', properties: { key: { type: 'string' } } },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({
      content: [{ type: 'text', text: `the ${String(request.params.arguments?.key)} is teal` }],
    }));
    // Stateless: a server and transport per request, answering in JSON.
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const http = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    requests,
    stop: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

let fake: FakeOpenAi;
let receiver: OtlpReceiver;
let mcp: Awaited<ReturnType<typeof startMcpServer>>;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  receiver = await new OtlpReceiver().start();
  mcp = await startMcpServer();
  dir = await mkdtemp(join(tmpdir(), 'spool-tracing-'));
  const mcpConfig = join(dir, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: { remote: { url: mcp.url } } }));
  env = {
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_MODEL: 'fake-model',
    DATABASE_URL: fileDatabaseUrl(),
    MCP_CONFIG: mcpConfig,
  };
});
afterAll(async () => {
  await Promise.all([fake.stop(), receiver.stop(), mcp.stop()]);
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  receiver.spans.length = 0;
  mcp.requests.length = 0;
  fake.requests.length = 0;
});

/** A console session of two messages: the first calls the MCP server's tool, the second does not. */
async function twoTurns(extraEnv: Record<string, string>): Promise<void> {
  fake.enqueue(
    { toolCalls: [{ id: 'c1', name: 'remote__lookup', arguments: '{"key":"colour"}' }] },
    { content: 'It is teal.' },
    { content: 'You are welcome.' },
  );
  const run = await runSpool(['chat', '--session', `tracing-${Date.now()}-${Math.random()}`], {
    env: { ...env, ...extraEnv },
    input: 'what colour is the secret door?\nthanks\n',
  });
  expect(run.stdout).toBe('It is teal.\nYou are welcome.\n');
  expect(fake.rejections).toEqual([]);
}

const toolCalls = () => mcp.requests.filter((r) => r.method === 'tools/call');

describe('tracing', () => {
  it('sends a trace per turn, the model requests and tool calls under its turn, and the trace to the MCP server', async () => {
    await twoTurns({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });

    // Spool flushes its spans before it exits.
    const turns = receiver.spans.filter((s) => s.name === 'invoke_agent Spool');
    expect(turns).toHaveLength(2);
    expect(new Set(turns.map((t) => t.traceId)).size).toBe(2);
    for (const turn of turns) {
      expect(turn.parentSpanId ?? '').toBe('');
      expect(turn.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'messaging.system': 'console',
        'messaging.operation.type': 'process',
        'spool.turn.status': 'ok',
      });
    }
    const childrenOf = (turn: ReceivedSpan) =>
      receiver.spans.filter((s) => s.traceId === turn.traceId && s !== turn);
    // Batches may arrive in any order: the first turn is the one that called the tool.
    const [first, second] = [...turns].sort((a, b) => childrenOf(b).length - childrenOf(a).length);
    // Every other span of a turn's trace is its child: two model requests and a tool call, then one.
    const children = (turn: ReceivedSpan) =>
      childrenOf(turn)
        .map((s) => [s.name, s.parentSpanId])
        .sort();
    expect(children(first!)).toEqual([
      ['chat fake-model', first!.spanId],
      ['chat fake-model', first!.spanId],
      ['execute_tool remote__lookup', first!.spanId],
    ]);
    expect(children(second!)).toEqual([['chat fake-model', second!.spanId]]);
    expect(receiver.spans).toHaveLength(6);

    // The tokens the model reported, request by request (the fake counts 10 per message).
    const chats = receiver.spans.filter((s) => s.name.startsWith('chat '));
    const reported = fake.requests.map((r) => 10 * r.messages.length);
    const byNumber = (a: number, b: number) => a - b;
    expect(
      chats.map((c) => Number(c.attributes['gen_ai.usage.input_tokens'])).sort(byNumber),
    ).toEqual(reported.sort(byNumber));
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'fake-model',
      'gen_ai.response.model': 'fake-model',
    });
    const answer = chats.find(
      (c) => c.attributes['gen_ai.usage.output_tokens'] === 'It is teal.'.length,
    );
    expect(answer?.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    const tool = receiver.spans.find((s) => s.name === 'execute_tool remote__lookup')!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'remote__lookup',
      // Spool's own id for the call, as stored.
      'gen_ai.tool.call.id': expect.stringMatching(/^call_[0-9a-f]{32}$/),
    });

    // The MCP server heard the tool span's trace, in the HTTP header and in _meta.
    const [call] = toolCalls();
    expect(call?.traceparent).toBe(`00-${first!.traceId}-${tool.spanId}-01`);
    expect(call?.params?._meta?.traceparent).toBe(call?.traceparent);

    // No message text, arguments or results unless asked for.
    const everything = JSON.stringify(receiver.spans);
    for (const text of ['secret door', 'teal', 'colour', 'welcome', 'thanks'])
      expect(everything).not.toContain(text);
  });

  it('puts message text, arguments and results in spans when asked to', async () => {
    await twoTurns({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
    const tool = receiver.spans.find((s) => s.name === 'execute_tool remote__lookup')!;
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
      key: 'colour',
    });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('the colour is teal');
    const turn = receiver.spans.find(
      (s) => s.name === 'invoke_agent Spool' && s.traceId === tool.traceId,
    )!;
    expect(JSON.parse(String(turn.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'what colour is the secret door?' }] },
    ]);
    expect(JSON.parse(String(turn.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'It is teal.' }] },
    ]);
    // The request after the call: the question, the call and its result, as the model read them.
    const chats = receiver.spans.filter(
      (s) => s.name.startsWith('chat ') && s.traceId === tool.traceId,
    );
    const [, second] = chats.sort((a, b) =>
      Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)),
    );
    expect(JSON.parse(String(second!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'what colour is the secret door?' }] },
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool_call',
            id: expect.any(String),
            name: 'remote__lookup',
            arguments: '{"key":"colour"}',
          },
        ],
      },
      {
        role: 'tool',
        parts: [
          { type: 'tool_call_response', id: expect.any(String), response: 'the colour is teal' },
        ],
      },
    ]);
    expect(JSON.parse(String(second!.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'It is teal.' }],
        finish_reason: 'stop',
      },
    ]);
    expect(second!.attributes['gen_ai.system_instructions']).toContain('"type":"text"');
  });

  it('sends the tool span’s trace on every leg of a 2026-07-28 call that asks for input and is retried', async () => {
    const port = await freePort();
    const requestsFile = join(dir, 'modern-requests.log');
    const modern = spawn(
      process.execPath,
      [join(import.meta.dirname, 'fixtures/modern-mcp-server.mjs'), 'http', String(port)],
      { env: { ...process.env, REQUESTS_FILE: requestsFile }, stdio: 'ignore' },
    );
    try {
      const url = `http://127.0.0.1:${port}/mcp`;
      await until(() =>
        fetch(url, { method: 'POST' }).then(
          () => true,
          () => undefined,
        ),
      );
      const mcpConfig = join(dir, 'modern-mcp.json');
      await writeFile(mcpConfig, JSON.stringify({ mcpServers: { modern: { url } } }));
      fake.enqueue(
        { toolCalls: [{ id: 'm1', name: 'modern__sign_up', arguments: '{}' }] },
        (request) => ({ content: String(request.messages.at(-1)!.content) }),
      );
      // Piped: nobody to ask, so the form is declined, and the call is sent again saying so.
      const run = await runSpool(['chat', '--session', `tracing-mrtr-${Date.now()}`], {
        env: { ...env, MCP_CONFIG: mcpConfig, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
        input: 'sign me up\n',
      });
      expect(run.stdout).toBe('got {"action":"decline"} with state asked on http\n');
      const tool = await until(() =>
        receiver.spans.find((s) => s.name === 'execute_tool modern__sign_up'),
      );
      const calls = (await readFile(requestsFile, 'utf8'))
        .split('\n')
        .filter((line) => line.startsWith('tools/call '));
      expect(calls).toEqual(
        Array(2).fill(
          `tools/call mcp-method=tools/call mcp-name=sign_up mcp-protocol-version=2026-07-28 traceparent=00-${tool.traceId}-${tool.spanId}-01`,
        ),
      );
    } finally {
      modern.kill();
    }
  });

  it('sends no spans and no trace context when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    await twoTurns({});
    expect(toolCalls()).toHaveLength(1);
    expect(mcp.requests.filter((r) => r.traceparent)).toEqual([]);
    expect(toolCalls()[0]!.params?._meta?.traceparent).toBeUndefined();
    expect(receiver.spans).toEqual([]);
  });

  it('marks a model request the endpoint refused, and its turn, as failed', async () => {
    fake.enqueue({ status: 400, message: 'this request is refused' });
    const run = await runSpool(['chat', '--session', `tracing-failed-${Date.now()}`], {
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      input: 'hello\n',
    });
    expect(run.code).toBe(1);
    const chat = receiver.spans.find((s) => s.name === 'chat fake-model')!;
    expect(chat.status.code).toBe(2); // ERROR
    expect(chat.attributes['error.type']).toBe('LlmRequestError');
    const turn = receiver.spans.find((s) => s.name === 'invoke_agent Spool')!;
    expect(chat.parentSpanId).toBe(turn.spanId);
    expect(turn.attributes['spool.turn.status']).toBe('failed');
    expect(turn.status.code).toBe(2);
  });

  it('answers and exits cleanly when the receiver cannot be reached', async () => {
    fake.enqueue({ content: 'still here' });
    const run = await runSpool(['chat', '--session', `tracing-unreachable-${Date.now()}`], {
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '500',
      },
      input: 'hello\n',
    });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'still here\n' });
  });

  it('refuses to start on a tracing setting it cannot read, naming it', async () => {
    const run = await runSpool(['chat'], {
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes',
      },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(run.stderr).toContain('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT');
  });
});
