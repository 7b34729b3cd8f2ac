// `npm test`: the checks (scripts/checks.mjs) and Vitest at once. The tests keep both cores busy
// for most of a run and leave one idle while the files timed against leases run alone at its end;
// the checks, at the lowest priority, take that time instead of 21 s of their own before the tests.
// Vitest prints as it goes, the checks when the tests end; the exit status is 1 if either failed.
// Arguments go to `vitest run`.
import { spawn } from 'node:child_process';

/** Resolves with the exit code of `child`, once it has exited. */
const exited = (child) => new Promise((resolve) => child.on('close', (code) => resolve(code)));

const checks = spawn(process.execPath, ['scripts/checks.mjs', '--lowest-priority'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let checksOutput = '';
checks.stdout.on('data', (d) => (checksOutput += d));
checks.stderr.on('data', (d) => (checksOutput += d));
const checksPassed = exited(checks).then((code) => code === 0);

const vitest = spawn('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
const testsPassed = (await exited(vitest)) === 0;

const passed = await checksPassed;
process.stdout.write(`\nThe checks (type check, ESLint, Prettier):${checksOutput}\n`);
if (!passed || !testsPassed) process.exit(1);
