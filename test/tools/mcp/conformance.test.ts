import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/process.ts';

const require = createRequire(import.meta.url);
const CLI = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const CLIENT_PROJECT = fileURLToPath(
  new URL('./tsconfig.conformance-client.json', import.meta.url),
);
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * The client (conformance-client.ts) compiled to JavaScript in a directory of its own, for the
 * suite to start with plain node, as the bot runs from dist/: through tsx, each of the scenarios
 * paid again for loading tsx and transforming the client and what it imports. The compiler only
 * strips types here (--noCheck): `npm run typecheck` checks them.
 */
async function compileClient(): Promise<{ dir: string; entry: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-conformance-client-'));
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', CLIENT_PROJECT, '--noCheck', '--outDir', dir],
    { encoding: 'utf8' },
  );
  if (tsc.status !== 0)
    throw new Error(`compiling the conformance client failed:\n${tsc.stdout}${tsc.stderr}`);
  // ES modules, as in the repository; its packages are the repository's.
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, entry: join(dir, 'test', 'tools', 'mcp', 'conformance-client.js') };
}

/** Runs the suite's CLI; resolves with its exit code and what it printed. */
function conformance(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
  let client: { dir: string; entry: string };
  beforeAll(async () => {
    client = await compileClient();
  });
  afterAll(async () => {
    if (client) await rm(client.dir, { recursive: true, force: true });
  });

  /** Runs one scenario against the compiled client: what the suite printed, its code, its checks. */
  async function runScenario(scenario: string) {
    const out = await mkdtemp(join(tmpdir(), 'spool-conformance-'));
    try {
      const command = `${process.execPath} ${client.entry}`;
      const run = await conformance([
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
