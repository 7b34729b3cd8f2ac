/** `npm run bench -- NAME`: runs bench/NAME.ts. */
import { readdirSync } from 'node:fs';

const names = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -3));
const name = process.argv[2];
if (!name || !names.includes(name)) {
  console.error(`usage: npm run bench -- NAME, where NAME is one of: ${names.join(', ')}`);
  process.exit(2);
}
await import(`./${name}.ts`);
