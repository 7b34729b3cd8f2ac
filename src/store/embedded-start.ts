import { resolve } from 'node:path';
import { lockDataDir } from './data-dir-lock.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.ts';

/**
 * The embedded server under `dataDir`, its data directory locked until the server is stopped.
 * `begun`: as startEmbeddedPostgres's.
 */
export async function startLockedEmbeddedPostgres(
  dataDir: string,
  begun?: () => void,
): Promise<EmbeddedServer> {
  const unlock = await lockDataDir(dataDir);
  try {
    const server = await startEmbeddedPostgres(dataDir, begun);
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

let early: { dir: string; server: Promise<EmbeddedServer> } | undefined;

/**
 * Begins the embedded server's start before Spool's modules are loaded (start.ts). Loading them
 * keeps this thread busy without a turn of its event loop (0.4 s on a quiet machine, seconds
 * under load); begun first, the server starts meanwhile, and a first start's copy of the cluster
 * is written to disk. Resolves once that work runs in processes of its own (or the start is over);
 * openDatabase takes the start, and reports its failure.
 */
export async function beginEmbeddedStart(dataDir: string): Promise<void> {
  await new Promise<void>((begun) => {
    const server = startLockedEmbeddedPostgres(dataDir, begun);
    server.then(
      () => begun(),
      () => begun(),
    );
    early = { dir: resolve(dataDir), server };
  });
}

/** The start begun for `dataDir`, once; undefined when none was. */
export function takeEmbeddedStart(dataDir: string): Promise<EmbeddedServer> | undefined {
  if (early?.dir !== resolve(dataDir)) return undefined;
  const { server } = early;
  early = undefined;
  return server;
}

/**
 * Stops a start begun and never taken: Spool ended before it opened its database (refused
 * settings or mcp.json), and leaves no server running, as before it began one first.
 */
export async function abandonEmbeddedStart(): Promise<void> {
  const server = await early?.server.catch(() => undefined);
  early = undefined;
  await server?.stop().catch(() => {});
}
