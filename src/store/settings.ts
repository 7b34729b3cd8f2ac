import type { SettingsReader } from '../core/ports/settings.ts';

export interface StoreSettings {
  /** Unset: an embedded PostgreSQL server of its own under `dataDir`. */
  databaseUrl?: string;
  connectTimeoutMs: number;
  dataDir: string;
  /** Answered inbox and outbox rows are kept this long. */
  retentionDays: number;
}

export function storeSettings(r: SettingsReader): StoreSettings {
  return {
    databaseUrl: databaseUrl(r),
    connectTimeoutMs: r.int('DATABASE_CONNECT_TIMEOUT_MS', 10_000),
    dataDir: r.string('DATA_DIR') ?? './data',
    retentionDays: r.int('INBOX_RETENTION_DAYS', 7),
  };
}

function databaseUrl(r: SettingsReader): string | undefined {
  const raw = r.string('DATABASE_URL');
  if (raw === undefined) return undefined;
  try {
    if (['postgres:', 'postgresql:'].includes(new URL(raw).protocol)) return raw;
  } catch {
    // named below
  }
  // Never echo the value: it usually holds a password.
  r.problem('DATABASE_URL must be a postgresql:// URL');
  return undefined;
}
