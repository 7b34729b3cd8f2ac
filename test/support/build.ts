import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT } from './process.ts';

const require = createRequire(import.meta.url);
/** Where the sources dist/ was compiled from are named, by their hash. */
const STAMP = join(REPO_ROOT, 'dist', '.built-from');
const MAIN = join(REPO_ROOT, 'dist', 'main.js');

/** What the build reads: the sources, its configuration and the compiler. */
async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const sources = (await readdir(join(REPO_ROOT, 'src'), { recursive: true }))
    .filter((path) => !path.endsWith('.test.ts'))
    .map((path) => join('src', path))
    .sort();
  const { version } = require('typescript/package.json') as { version: string };
  hash.update(`typescript ${version}\n`);
  for (const path of [...sources, 'tsconfig.json', 'tsconfig.build.json']) {
    const file = join(REPO_ROOT, path);
    if (!(await stat(file)).isFile()) continue;
    hash
      .update(`${path}\n`)
      .update(await readFile(file))
      .update('\n');
  }
  return hash.digest('hex');
}

/**
 * Whether dist/ was compiled from these sources: by this setup (its stamp names them), and by
 * nothing since (a later `npm run build` rewrote dist/main.js after the stamp).
 */
async function builtFrom(hash: string): Promise<boolean> {
  try {
    const [stamp, stamped, main] = await Promise.all([
      readFile(STAMP, 'utf8'),
      stat(STAMP),
      stat(MAIN),
    ]);
    return stamp === hash && stamped.mtimeMs >= main.mtimeMs;
  } catch {
    return false;
  }
}

/**
 * Tests start Spool as `npm start` does, from dist/ (test/support/process.ts): a node start, not a
 * tsx one, which compiles every module again in each of the run's two hundred processes. So that
 * they run the source as it is now, dist/ is compiled before the run unless it was compiled from
 * exactly these sources; the build must be clean (`npm run build`: tsconfig.build.json).
 */
export default async function setup(): Promise<void> {
  const hash = await sourceHash();
  if (await builtFrom(hash)) return;
  const build = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  const output = build.stdout + build.stderr;
  if (build.status !== 0 || output !== '')
    throw new Error(`npm run build failed (status ${build.status}):\n${output}`);
  await writeFile(STAMP, hash);
}
