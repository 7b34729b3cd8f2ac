import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const CLI = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const CLIENT = fileURLToPath(new URL('./conformance-client.ts', import.meta.url));
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * The suite's CLI and the client (conformance-client.ts), each bundled with what it imports into
 * one file of JavaScript, which every scenario starts with plain node, as the bot runs from dist/.
 * Most of either's start was Node finding and reading the hundreds of files of its packages (zod,
 * express, both MCP SDKs), once per scenario. esbuild only strips the client's types:
 * `npm run typecheck` checks them. What the suite reads beside its own file (`requirements/`) is
 * for its `--requirements` option, which these tests do not use.
 */
async function bundle(): Promise<{ dir: string; cli: string; client: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-conformance-'));
  const [cli, client] = [join(dir, 'cli.mjs'), join(dir, 'client.mjs')];
  const options = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    // The packages written as CommonJS require Node's own modules, which an ES module has no
    // `require` for.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'error',
  } as const;
  await Promise.all([
    build({ ...options, entryPoints: [CLI], outfile: cli }),
    build({ ...options, entryPoints: [CLIENT], outfile: client }),
  ]);
  return { dir, cli, client };
}

/** Runs the suite's CLI (bundled); resolves with its exit code and what it printed. */
function conformance(
  cli: string,
  args: string[],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('close', (code) => resolve({ code, output }));
  });
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
}

/**
 * Every auth scenario of the suite. enterprise-managed-authorization (cross-app access, SEP-990) is
 * the exchange of a person's sign-in to an enterprise identity provider for the server's token;
 * dpop and dpop-nonce (SEP-1932) an operator's `"dpop": true`; wif-jwt-bearer (SEP-1933) the
 * `jwt_bearer` grant with the workload's token file; authorization-server-migration (SEP-2352)
 * Spool registering again with the authorization server a server names anew.
 */
const AUTH_SCENARIOS = [
  'metadata-default',
  'metadata-var1',
  'metadata-var2',
  'metadata-var3',
  'basic-cimd',
  'scope-from-www-authenticate',
  'scope-from-scopes-supported',
  'scope-omitted-when-undefined',
  'scope-step-up',
  'scope-retry-limit',
  'token-endpoint-auth-basic',
  'token-endpoint-auth-post',
  'token-endpoint-auth-none',
  'pre-registration',
  '2025-03-26-oauth-metadata-backcompat',
  '2025-03-26-oauth-endpoint-fallback',
  'resource-mismatch',
  'offline-access-scope',
  'offline-access-not-supported',
  'client-credentials-jwt',
  'client-credentials-basic',
  'enterprise-managed-authorization',
  'iss-supported',
  'iss-not-advertised',
  'iss-supported-missing',
  'iss-wrong-issuer',
  'iss-unexpected',
  'iss-normalized',
  'metadata-issuer-mismatch',
  'authorization-server-migration',
  'dpop',
  'dpop-nonce',
  'wif-jwt-bearer',
];

/**
 * The skills extension (SEP-2640): skills listed, none of their files read before the model loads
 * one (no-prefetch), and a SKILL.md that does not match its entry never loaded (verify-…).
 */
const SKILLS_SCENARIOS = [
  'sep-2640-client-no-prefetch',
  'sep-2640-client-verify-digest',
  'sep-2640-client-verify-size',
  'sep-2640-client-verify-frontmatter',
];

// The suite's CLI needs Node 22 or newer (it imports fs.globSync): both of CI's passes (Node 22 and
// 26) run these; on Node 20 they are skipped.
describe.skipIf(NODE_MAJOR < 22)('the official MCP conformance suite, client mode', () => {
  let bundles: { dir: string; cli: string; client: string };
  beforeAll(async () => {
    bundles = await bundle();
  });
  afterAll(async () => {
    if (bundles) await rm(bundles.dir, { recursive: true, force: true });
  });

  /** Runs one scenario against the bundled client: what the suite printed, its code, its checks. */
  async function runScenario(scenario: string) {
    const out = await mkdtemp(join(tmpdir(), 'spool-conformance-'));
    try {
      const command = `${process.execPath} ${bundles.client}`;
      const run = await conformance(bundles.cli, [
        'client',
        '--command',
        command,
        '--scenario',
        scenario,
        '-o',
        out,
      ]);
      // Scenarios named auth/… write their results a folder deeper.
      const found = (await readdir(out, { recursive: true })).find((f) =>
        f.endsWith('checks.json'),
      );
      const checks = JSON.parse(await readFile(join(out, found!), 'utf8')) as Check[];
      return { ...run, checks };
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }

  /** No check failed or warned, and one at least succeeded (every one skipped proves nothing). */
  function expectPassed(checks: Check[]): void {
    // A check skipped does not apply (a capability Spool does not declare).
    expect(checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')).toEqual([]);
    expect(checks.some((c) => c.status === 'SUCCESS')).toBe(true);
  }

  // sse-retry passes too when run alone; it checks the reconnect's timing to 250 ms, which a
  // machine busy with the rest of the suite can miss.
  it.each([
    'initialize',
    'tools_call',
    'elicitation-sep1034-client-defaults',
    'request-metadata',
    'http-standard-headers',
    'http-custom-headers',
    'http-invalid-tool-headers',
    'json-schema-ref-no-deref',
    'json-schema-2020-12-preservation',
    ...SKILLS_SCENARIOS,
    ...AUTH_SCENARIOS.map((name) => `auth/${name}`),
  ])("passes %s with Spool's MCP client", async (scenario) => {
    const run = await runScenario(scenario);
    expect(run.output).toContain('OVERALL: PASSED');
    expect(run.code).toBe(0);
    expectPassed(run.checks);
  });

  // Its last tool, on a server that offers only 2026-07-28, answers without the `resultType` that
  // revision requires of its servers (absent means "complete" only from a server of an earlier
  // revision): the v2 SDK refuses the result, so the client exits with that call failed and the
  // suite reports the scenario failed, its checks all passed.
  it('passes every check of sep-2322-client-request-state, refusing only a 2026 result without resultType', async () => {
    const run = await runScenario('sep-2322-client-request-state');
    expectPassed(run.checks);
    expect(run.checks.map((c) => c.id)).toContain('sep-2322-default-result-type-complete');
    // The client's line for each call it made (`<tool>: ok|error: why`), as the suite shows them.
    const calls = [...run.output.matchAll(/^conformance__(\w+): (ok|error): (.*)$/gm)].map(
      ([, tool, outcome, why]) => ({ tool, outcome, why }),
    );
    expect(calls.map((c) => c.tool)).toEqual([
      'test_mrtr_echo_state',
      'test_mrtr_no_state',
      'test_mrtr_unrelated',
      'test_mrtr_no_result_type',
    ]);
    const failed = calls.filter((c) => c.outcome === 'error');
    expect(failed.map((c) => c.tool)).toEqual(['test_mrtr_no_result_type']);
    expect(failed[0]!.why).toContain('resultType');
    expect(run.code).not.toBe(0);
  });
});
