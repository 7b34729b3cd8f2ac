import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentHooks } from './core/hooks.ts';

/** The inbox as the metrics see it. */
export interface InboxDepth {
  depth(): Promise<{ pending: number; oldestSeconds: number }>;
}

/**
 * Prometheus metrics of the agent, fed by its step and turn events (the hooks), and of the inbox,
 * read when scraped.
 */
export function agentMetrics(registry: Registry, inbox: InboxDepth): AgentHooks {
  const registers = [registry];
  const turns = new Counter({ name: 'spool_turns_total', help: 'Turns, by how they ended', labelNames: ['status'], registers });
  const llmSeconds = new Histogram({ name: 'spool_llm_request_seconds', help: 'Model calls', buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60], registers });
  const tokens = new Counter({ name: 'spool_llm_tokens_total', help: 'Tokens, by kind', labelNames: ['kind'], registers });
  const overflow = new Counter({ name: 'spool_llm_overflow_requests_total', help: 'Model calls that needed harder compaction, by level', labelNames: ['level'], registers });
  const toolCalls = new Counter({ name: 'spool_tool_calls_total', help: 'Tool calls, by tool and outcome', labelNames: ['tool', 'outcome'], registers });
  const toolSeconds = new Histogram({ name: 'spool_tool_call_seconds', help: 'Tool calls, by tool', labelNames: ['tool'], buckets: [0.01, 0.1, 0.5, 1, 5, 30, 120], registers });
  const previewed = new Counter({ name: 'spool_results_previewed_total', help: 'Results sent as head+tail previews', registers });
  const repairs = new Counter({ name: 'spool_pairing_repairs_total', help: 'Messages pairing repair dropped, mended or added in requests', registers });
  inboxGauges(registers, inbox);
  return {
    onStepFinish(step) {
      llmSeconds.observe(step.llmMs / 1000);
      if (step.usage) {
        tokens.inc({ kind: 'prompt' }, step.usage.promptTokens);
        tokens.inc({ kind: 'completion' }, step.usage.completionTokens);
      }
      if (step.level > 0) overflow.inc({ level: String(step.level) });
      for (const call of step.toolCalls) {
        toolCalls.inc({ tool: call.name, outcome: call.isError ? 'error' : 'ok' });
        toolSeconds.observe({ tool: call.name }, call.durationMs / 1000);
      }
      previewed.inc(step.previewed);
      repairs.inc(step.repairs);
    },
    onTurnFinish(turn) {
      turns.inc({ status: turn.status });
    },
  };
}

/** Replies delivered, by platform and whether they answered or told the user the turn failed. */
export function replyMetrics(registry: Registry): (platform: string, outcome: string) => void {
  const replies = new Counter({ name: 'spool_replies_total', help: 'Replies delivered, by platform and outcome', labelNames: ['platform', 'outcome'], registers: [registry] });
  return (platform, outcome) => replies.inc({ platform, outcome });
}

function inboxGauges(registers: Registry[], inbox: InboxDepth): void {
  let last: Promise<{ pending: number; oldestSeconds: number }> | undefined;
  // One query per scrape, shared by both gauges.
  const read = () => (last ??= inbox.depth().finally(() => setImmediate(() => (last = undefined))));
  new Gauge({
    name: 'spool_inbox_pending',
    help: 'Messages received and not yet answered',
    registers,
    async collect() {
      this.set((await read()).pending);
    },
  });
  new Gauge({
    name: 'spool_inbox_oldest_pending_seconds',
    help: 'Age of the oldest unanswered message',
    registers,
    async collect() {
      this.set((await read()).oldestSeconds);
    },
  });
}

export interface Route {
  path: string;
  method: 'GET';
  handler(req: IncomingMessage, res: ServerResponse): void;
}

/** GET /healthz (the process is up), /readyz (the database answers) and /metrics (Prometheus text). */
export function observabilityRoutes(registry: Registry, ready: () => Promise<boolean>): Route[] {
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  return [
    { path: '/healthz', method: 'GET', handler: (_req, res) => send(res, 200, 'text/plain', 'ok\n') },
    {
      path: '/readyz',
      method: 'GET',
      handler: (_req, res) => void ready().then((ok) => send(res, ok ? 200 : 503, 'text/plain', ok ? 'ready\n' : 'database not answering\n')),
    },
    {
      path: '/metrics',
      method: 'GET',
      handler: (_req, res) =>
        void registry.metrics().then(
          (text) => send(res, 200, registry.contentType, text),
          (error: Error) => send(res, 500, 'text/plain', `${error.message}\n`),
        ),
    },
  ];
}

/** The routes on a port of their own, for when no Slack HTTP receiver serves them. */
export async function serveRoutes(port: number, routes: Route[]): Promise<Server> {
  const server = createServer((req, res) => {
    const route = routes.find((r) => r.method === req.method && r.path === req.url?.split('?')[0]);
    if (route) route.handler(req, res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
}
