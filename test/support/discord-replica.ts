import { APP_ID, type FakeDiscord } from './fake-discord.ts';
import type { FakeOpenAi } from './fake-openai.ts';
import { startSpool, type SpoolProcess } from './process.ts';

/**
 * `npm start` as one replica of a Discord bot against the fake Discord, on a shared PostgreSQL
 * database; `env` adds settings (short leases, spacing). Its stderr goes to `onLog`.
 */
export function startDiscordReplica(options: {
  llm: FakeOpenAi;
  discord: FakeDiscord;
  databaseUrl: string;
  dataDir: string;
  env: Record<string, string>;
  onLog(text: string): void;
}): SpoolProcess {
  const replica = startSpool([], {
    env: {
      OPENAI_BASE_URL: options.llm.baseURL,
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      DISCORD_TOKEN: 'discord-replica-test-token',
      DISCORD_APPLICATION_ID: APP_ID,
      DISCORD_API_URL: options.discord.apiUrl,
      ...options.env,
    },
    timeoutMs: 600_000,
  });
  replica.done.catch(() => {});
  replica.child.stderr.on('data', (d: Buffer) => options.onLog(d.toString()));
  return replica;
}
