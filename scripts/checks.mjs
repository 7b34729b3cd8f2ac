// `npm test`'s checks: the type check, ESLint with the import-circle check, and Prettier's check,
// at once: each runs on one core, and one after another they left the other core idle. Prints each
// one's output when it ends, and exits 1 if any failed. With `--lowest-priority` (`npm test`,
// beside the tests: scripts/test.mjs) they take only the time the tests leave idle.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const CHECKS = ['typecheck', 'lint', 'format:check'];

/** Runs `npm run <name>`; resolves with whether it passed, once its output is printed. */
function run(name) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => {
      const verdict = code === 0 ? 'passed' : `failed (exit ${code})`;
      process.stdout.write(`\n> ${scripts[name]}: ${verdict}\n${output}`);
      resolve(code === 0);
    });
  });
}

// Before any check starts: each inherits it.
if (process.argv.includes('--lowest-priority')) setPriority(19);

const passed = await Promise.all(CHECKS.map(run));
if (passed.includes(false)) process.exit(1);
