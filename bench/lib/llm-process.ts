/**
 * A minimal Chat Completions server in a process of its own, so that a benchmark times Spool and
 * not the model: it does not parse the request, it only finds the role of the last message. The
 * strict fake that validates every request is the tests' job.
 *
 *   tsx bench/lib/llm-process.ts MODE LATENCY_MS [CALLS_JSON]
 *
 * MODE tools: a user message is answered with tool calls (CALLS_JSON, by default one call each of
 * THREE_TOOLS without arguments), anything else with a short final answer. MODE echo: "answer to
 * <the newest user message>" (it parses the request for that). The
 * first line of stdout is the base URL.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const THREE_TOOLS = ['read', 'grep', 'list'];

export interface BenchCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Starts the model process; stop it with the returned function. */
export async function startLlmProcess(
  mode: 'tools' | 'echo',
  latencyMs = 0,
  calls: BenchCall[] = THREE_TOOLS.map((name) => ({ name, arguments: {} })),
): Promise<{ baseURL: string; connections(): Promise<number>; stop(): void }> {
  const args = [fileURLToPath(import.meta.url), mode, String(latencyMs), JSON.stringify(calls)];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const baseURL = first.value as string;
  const connections = async () =>
    Number(await (await fetch(new URL('/connections', baseURL))).text());
  return { baseURL, connections, stop: () => child.kill() };
}

function toolsReply(body: string, calls: BenchCall[]): { message: unknown; finish: string } {
  const at = body.lastIndexOf('"role":"');
  if (body.slice(at + 8, body.indexOf('"', at + 8)) !== 'user')
    return { message: { role: 'assistant', content: 'The files agree.' }, finish: 'stop' };
  const toolCalls = calls.map((c, i) => ({
    id: `call_${i}`,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  return {
    message: { role: 'assistant', content: null, tool_calls: toolCalls },
    finish: 'tool_calls',
  };
}

function echoReply(body: string): { message: unknown; finish: string } {
  const messages = (JSON.parse(body) as { messages: Array<{ role: string; content: string }> })
    .messages;
  return {
    message: {
      role: 'assistant',
      content: `answer to ${[...messages].reverse().find((m) => m.role === 'user')!.content}`,
    },
    finish: 'stop',
  };
}

function completion({ message, finish }: { message: unknown; finish: string }): unknown {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'bench',
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const calls = JSON.parse(process.argv[4] ?? '[]') as BenchCall[];
  const reply = process.argv[2] === 'echo' ? echoReply : (body: string) => toolsReply(body, calls);
  const latencyMs = Number(process.argv[3] ?? 0);
  let connections = 0;
  const server = createServer((req, res) => {
    // TCP connections accepted so far: a client that keeps them alive opens few.
    if (req.url === '/connections') return void res.writeHead(200).end(String(connections));
    // Spool's startup check lists the models once.
    if (req.method === 'GET')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"object":"list","data":[]}');
    // Nor is it Ollama: its POST /api/show (asked for the model's window at startup) is not found.
    if (!req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = completion(reply(Buffer.concat(chunks).toString('utf8')));
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      }, latencyMs);
    });
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1', () =>
    console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`),
  );
}
