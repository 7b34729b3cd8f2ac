// `prisma generate` offline. Generate never runs the schema engine, but Prisma's CLI downloads
// one first unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file; any file will do.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const env = { ...process.env };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY || !existsSync(env.PRISMA_SCHEMA_ENGINE_BINARY)) {
  env.PRISMA_SCHEMA_ENGINE_BINARY = fileURLToPath(import.meta.url);
}
const cli = require.resolve('prisma/build/index.js');
const { status } = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env });
process.exit(status ?? 1);
