// `npm run build`: src/ compiled to dist/ with TypeScript 7's tsc (tsconfig.build.json), and the
// hash of what it was compiled from written beside it, so that a test run can tell whether dist/ is
// the source as it is now (test/support/build.ts). With --if-stale it compiles only when it is not.
// Prints what tsc printed and exits with its status.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const STAMP = join(ROOT, 'dist', '.built-from');
const MAIN = join(ROOT, 'dist', 'main.js');

/** What the build reads: the sources but the tests, its configuration and the compiler. */
function sourceHash() {
  const hash = createHash('sha256');
  hash.update(`typescript ${require('typescript-7/package.json').version}\n`);
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true })
    .filter((path) => !path.endsWith('.test.ts'))
    .map((path) => join('src', path))
    .sort();
  for (const path of [...sources, 'tsconfig.json', 'tsconfig.build.json']) {
    const file = join(ROOT, path);
    if (statSync(file).isFile()) hash.update(`${path}\n`).update(readFileSync(file)).update('\n');
  }
  return hash.digest('hex');
}

/**
 * Whether dist/ was compiled from the sources that hash to `hash`: its stamp names them, and no
 * compilation since (a bare `tsc -p tsconfig.build.json`) rewrote dist/main.js after the stamp.
 */
function builtFrom(hash) {
  try {
    return (
      readFileSync(STAMP, 'utf8') === hash && statSync(STAMP).mtimeMs >= statSync(MAIN).mtimeMs
    );
  } catch {
    return false;
  }
}

const hash = sourceHash();
if (!(process.argv.includes('--if-stale') && builtFrom(hash))) {
  const tsc = join(dirname(require.resolve('typescript-7/package.json')), 'bin', 'tsc');
  const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (status !== 0) process.exit(status ?? 1);
  // The hash of before the compilation: a source changed meanwhile makes the next run compile again.
  writeFileSync(STAMP, hash);
}
