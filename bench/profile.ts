/**
 * `npm run bench -- profile DIR`: where the CPU went in the `.cpuprofile` files under DIR, as
 * written by `node --cpu-prof --cpu-prof-dir=DIR …` (or by `PROFILE=1 npm run bench --
 * concurrency`,
 * which prints the same tables): self time by the package that owns the code, then the functions
 * with the most self time.
 */
import { builtinsByCaller, profileByOwner, topFunctions } from './lib/profile.ts';

const dir = process.argv[3];
if (!dir) {
  console.error('usage: npm run bench -- profile DIR (a directory of .cpuprofile files)');
  process.exit(2);
}
console.log(`| code | self time | share |\n|---|---|---|\n${profileByOwner(dir).join('\n')}\n`);
console.log(
  `| function | called from | self time |\n|---|---|---|\n${topFunctions(dir).join('\n')}`,
);
console.log(
  `\n| package | Node's and V8's own work it asked for |\n|---|---|\n${builtinsByCaller(dir).join('\n')}`,
);
