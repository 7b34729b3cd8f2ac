import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { queryAt } from './global-db.ts';

/**
 * Each test file's own database, copied from the run's migrated one (`databaseUrl`, a template) on
 * the same server: files that run at once never see each other's rows, nor take each other's lanes
 * over (an engine's poll works any lane that is due in its database).
 */
const name = `spool_file_${process.pid}_${randomBytes(4).toString('hex')}`;

/** Database `database` on the server of the run's databases. */
export function serverDatabaseUrl(database: string): string {
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${database}`;
  return url.toString();
}

/** This file's database (created before its first hook runs, dropped after its last). */
export const fileDatabaseUrl = (): string => serverDatabaseUrl(name);

export async function createFileDatabase(): Promise<void> {
  const template = new URL(inject('databaseUrl')).pathname.slice(1);
  await queryAt(serverDatabaseUrl('postgres'), `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
}

export async function dropFileDatabase(): Promise<void> {
  await queryAt(serverDatabaseUrl('postgres'), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
