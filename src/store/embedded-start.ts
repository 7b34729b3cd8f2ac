import { lockDataDir } from './data-dir-lock.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.ts';

/** The embedded server under `dataDir`, its data directory locked until the server is stopped. */
export async function startLockedEmbeddedPostgres(dataDir: string): Promise<EmbeddedServer> {
  const unlock = await lockDataDir(dataDir);
  try {
    const server = await startEmbeddedPostgres(dataDir);
    return {
      ...server,
      async stop() {
        await server.stop();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}
