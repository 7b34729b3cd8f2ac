import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './process.ts';

/**
 * Tests start Spool as `npm start` does, from dist/ (test/support/process.ts): a node start, not a
 * tsx one, which costs twice to three times the CPU in every process the run starts. So that they
 * run the source as it is now, dist/ is compiled before the run unless `npm run build` compiled it
 * from exactly these sources (scripts/build.mjs); the build must be clean.
 */
export default function setup(): void {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  const output = build.stdout + build.stderr;
  if (build.status !== 0 || output !== '')
    throw new Error(`npm run build failed (status ${build.status}):\n${output}`);
}
