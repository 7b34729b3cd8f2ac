import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentHooks } from './core/agent/hooks.ts';
import type { ShardEvent } from './core/ports/platform/gateway.ts';

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
  const turns = new Counter({
    name: 'spool_turns_total',
    help: 'Turns, by how they ended',
    labelNames: ['status'],
    registers,
  });
  const llmSeconds = new Histogram({
    name: 'spool_llm_request_seconds',
    help: 'Model calls',
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers,
  });
  const tokens = new Counter({
    name: 'spool_llm_tokens_total',
    help: 'Tokens, by kind',
    labelNames: ['kind'],
    registers,
  });
  const adjusted = new Counter({
    name: 'spool_llm_usage_adjusted_total',
    help: 'Usage counts a model server reported that could not be kept as they were, by field and what was done (dropped, rounded, clamped, derived)',
    labelNames: ['field', 'fix'],
    registers,
  });
  const overflow = new Counter({
    name: 'spool_llm_overflow_requests_total',
    help: 'Model calls that needed harder compaction, by level',
    labelNames: ['level'],
    registers,
  });
  const toolCalls = new Counter({
    name: 'spool_tool_calls_total',
    help: 'Tool calls, by tool and outcome',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const toolSeconds = new Histogram({
    name: 'spool_tool_call_seconds',
    help: 'Tool calls, by tool',
    labelNames: ['tool'],
    buckets: [0.01, 0.1, 0.5, 1, 5, 30, 120],
    registers,
  });
  const previewed = new Counter({
    name: 'spool_results_previewed_total',
    help: 'Results sent as head+tail previews',
    registers,
  });
  const repairs = new Counter({
    name: 'spool_pairing_repairs_total',
    help: 'Messages pairing repair dropped, mended or added in requests',
    registers,
  });
  inboxGauges(registers, inbox);
  return {
    onStepFinish(step) {
      llmSeconds.observe(step.llmMs / 1000);
      if (step.usage) {
        tokens.inc({ kind: 'prompt' }, step.usage.promptTokens);
        tokens.inc({ kind: 'completion' }, step.usage.completionTokens);
        for (const { field, fix } of step.usage.adjusted ?? []) adjusted.inc({ field, fix });
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
    onRedone: redoneMetric(registers),
  };
}

/** Model requests and tool calls a resumed turn started again (see `RedoneEvent`), by why. */
function redoneMetric(registers: Registry[]): NonNullable<AgentHooks['onRedone']> {
  const redone = new Counter({
    name: 'spool_redone_total',
    help: 'Model requests and tool calls started again for the same step, by kind and why',
    labelNames: ['kind', 'reason'],
    registers,
  });
  return ({ reason, modelRequests, toolCalls }) => {
    if (modelRequests) redone.inc({ kind: 'model_request', reason }, modelRequests);
    if (toolCalls) redone.inc({ kind: 'tool_call', reason }, toolCalls);
  };
}

/** Replies delivered, by platform and whether they answered or told the user the turn failed. */
export function replyMetrics(registry: Registry): (platform: string, outcome: string) => void {
  const replies = new Counter({
    name: 'spool_replies_total',
    help: 'Replies delivered, by platform and outcome',
    labelNames: ['platform', 'outcome'],
    registers: [registry],
  });
  return (platform, outcome) => replies.inc({ platform, outcome });
}

/**
 * Discord's shards on this replica: how many it holds, and how each connected. A `gap` is a shard
 * that identified where a session was to go on (its events since the last holder stopped are lost).
 */
export function gatewayMetrics(registry: Registry): (event: ShardEvent) => void {
  const connects = new Counter({
    name: 'spool_discord_shard_connects_total',
    help: 'Discord shard connections by how they began: identify, resume, gap (identified after a takeover or a lost session), kept_back (identify budget down to its margin)',
    labelNames: ['kind'],
    registers: [registry],
  });
  const replayed = new Counter({
    name: 'spool_discord_replayed_events_total',
    help: 'Events Discord replayed to resumed shards',
    registers: [registry],
  });
  const held = new Gauge({
    name: 'spool_discord_shards_held',
    help: 'Discord shards this replica holds',
    registers: [registry],
  });
  return (event) => {
    if (event.kind === 'held') return held.set(event.shards);
    connects.inc({ kind: event.kind });
    if (event.kind === 'resume') replayed.inc(event.replayed);
  };
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
  method: 'GET' | 'POST';
  /** Answers every path under `path` (which ends with a slash) too. */
  prefix?: boolean;
  handler(req: IncomingMessage, res: ServerResponse): void;
}

const routeFor = (routes: Route[], method: string | undefined, path: string) =>
  routes.find(
    (r) =>
      r.method === method &&
      (r.path === path ||
        (!!r.prefix && path.startsWith(r.path.endsWith('/') ? r.path : `${r.path}/`))),
  );

/**
 * What /readyz answers for: every part named when the bot starts (the database, each configured
 * platform) must say it is ready, and a part not yet set is not. Checks run at each request, so
 * a part that is lost (the database goes away, a gateway drops) turns it to 503 again.
 */
export class Readiness {
  private readonly checks: Map<string, () => boolean | Promise<boolean>>;
  /**
   * Lines on the parts that do not decide readiness: each MCP server, with the protocol version it
   * speaks or why it cannot be used (it needs login).
   */
  details: () => string[] = () => [];

  constructor(parts: string[]) {
    this.checks = new Map(parts.map((part) => [part, () => false]));
  }

  set(part: string, check: () => boolean | Promise<boolean>): void {
    this.checks.set(part, check);
  }

  /** The parts not ready now; none when the bot can take messages. */
  async notReady(): Promise<string[]> {
    const answers = await Promise.all(
      [...this.checks].map(async ([part, check]) =>
        (await Promise.resolve()
          .then(check)
          .catch(() => false))
          ? []
          : [part],
      ),
    );
    return answers.flat();
  }
}

/**
 * GET /healthz (the process runs), /readyz (every part of `readiness` is ready) and /metrics
 * (Prometheus text).
 */
export function observabilityRoutes(registry: Registry, readiness: Readiness): Route[] {
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  return [
    {
      path: '/healthz',
      method: 'GET',
      handler: (_req, res) => send(res, 200, 'text/plain', 'ok\n'),
    },
    {
      path: '/readyz',
      method: 'GET',
      handler: (_req, res) =>
        void readiness.notReady().then((parts) =>
          send(
            res,
            parts.length ? 503 : 200,
            'text/plain',
            (parts.length ? `not ready: ${parts.join(', ')}\n` : 'ready\n') +
              readiness
                .details()
                .map((line) => `${line}\n`)
                .join(''),
          ),
        ),
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

/** A JSON document served as it is (Spool's OAuth client metadata). */
export function jsonRoute(path: string, document: unknown): Route {
  const body = JSON.stringify(document);
  return {
    path,
    method: 'GET',
    handler: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
  };
}

/**
 * The bot's one HTTP server: its own routes from the start, and a platform's (Slack's events) once
 * mounted.
 */
export interface HttpEndpoint {
  server: Server;
  /** `handler` serves `path`; mounted without a path, every path no other handler serves. */
  mount(handler: RequestListener, path?: string): void;
}

/**
 * Serves `routes` on `port` as soon as the process runs, before the database or any platform:
 * a supervisor's liveness probe must not restart a bot that is only starting. Other requests get
 * 503 until a platform mounts their path, so Slack sends its events again later.
 */
export async function serveRoutes(
  port: number,
  routes: Route[],
  host?: string,
): Promise<HttpEndpoint> {
  const mounted = new Map<string | undefined, RequestListener>();
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0] ?? '';
    const route = routeFor(routes, req.method, path);
    if (route) return route.handler(req, res);
    const platform = mounted.get(path) ?? mounted.get(undefined);
    if (platform) return platform(req, res);
    res.writeHead(503);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, mount: (handler, path) => void mounted.set(path, handler) };
}
