/**
 * An OTLP/HTTP receiver in a process of its own, so that a benchmark times Spool's exporting and
 * not the receiving: it counts the spans posted to /v1/traces (GET /spans says how many).
 *
 *   tsx bench/lib/otlp-sink.ts
 *
 * The first line of stdout is the endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Starts the receiver; stop it with the returned function. */
export async function startOtlpSink(): Promise<{
  endpoint: string;
  spans(): Promise<number>;
  stop(): void;
}> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const endpoint = first.value as string;
  const spans = async () => Number(await (await fetch(new URL('/spans', endpoint))).text());
  return { endpoint, spans, stop: () => child.kill() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let spans = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.writeHead(200).end(String(spans));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { resourceSpans } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }>;
      };
      for (const r of resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1', () =>
    console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
  );
}
