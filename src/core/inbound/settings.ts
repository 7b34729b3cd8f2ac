import type { PipelineOptions } from './pipeline.ts';
import type { SettingsReader } from '../ports/settings.ts';

export interface DeliverySettings extends Omit<PipelineOptions, 'holder'> {
  /** On SIGTERM, how long running turns may finish before they are cut short (and resumed later). */
  shutdownGraceMs: number;
}

export function deliverySettings(r: SettingsReader): DeliverySettings {
  return {
    leaseMs: r.int('LEASE_TTL_MS', 15_000, 500),
    shutdownGraceMs: r.int('SHUTDOWN_GRACE_MS', 25_000, 0),
    pollMs: 1_000,
    maxAttempts: 3,
    files: { maxBytes: r.int('FILE_MAX_BYTES', 20_000_000), maxPerMessage: r.int('FILES_MAX_PER_MESSAGE', 10) },
    replyFileChars: r.int('REPLY_FILE_CHARS', 8_000),
  };
}
