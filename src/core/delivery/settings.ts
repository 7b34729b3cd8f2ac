import type { DeliveryOptions } from './engine/engine-options.ts';
import type { SettingsReader } from '../ports/settings.ts';
import type { Policy } from './rules/policy.ts';
import { parsePolicy } from './rules/policy-file.ts';
import { errorMessage } from '../errors.ts';
import { validTimeZone } from './schedules/schedule-rule.ts';

export interface DeliverySettings extends Omit<DeliveryOptions, 'holder'> {
  /**
   * On SIGTERM, how long running turns may finish before they are cut short (and resumed later).
   */
  shutdownGraceMs: number;
}

/**
 * POLICY_FILE: per-channel rules, read once and validated here, every bad entry named by its path.
 */
function policy(r: SettingsReader): { policy?: Policy } {
  const text = r.file('POLICY_FILE');
  if (text === undefined) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    r.problem(`POLICY_FILE is not valid JSON: ${errorMessage(error)}`);
    return {};
  }
  const parsed = parsePolicy(json);
  if ('problems' in parsed)
    parsed.problems.forEach((problem) => r.problem(`POLICY_FILE: ${problem}`));
  return 'policy' in parsed ? { policy: parsed.policy } : {};
}

export function deliverySettings(r: SettingsReader): DeliverySettings {
  return {
    leaseMs: r.int('LEASE_TTL_MS', 15_000, 500),
    shutdownGraceMs: r.int('SHUTDOWN_GRACE_MS', 25_000, 0),
    pollMs: 1_000,
    maxAttempts: 3,
    files: {
      maxBytes: r.int('FILE_MAX_BYTES', 20_000_000),
      maxPerMessage: r.int('FILES_MAX_PER_MESSAGE', 10),
    },
    replyFileChars: r.int('REPLY_FILE_CHARS', 8_000),
    approvalTimeoutMs: r.int('APPROVAL_TIMEOUT_MS', 600_000, 1_000),
    questionTimeoutMs: r.int('QUESTION_TIMEOUT_MS', 600_000, 1_000),
    scheduleTimeZone: scheduleTimeZone(r),
    ...policy(r),
  };
}

/** SCHEDULE_TIME_ZONE: where the platform does not say a person's, the zone schedules are read in. */
function scheduleTimeZone(r: SettingsReader): string {
  const zone = r.string('SCHEDULE_TIME_ZONE') ?? 'UTC';
  if (validTimeZone(zone)) return zone;
  r.problem(
    `SCHEDULE_TIME_ZONE: "${zone}" is not a time zone (Europe/Paris, America/New_York, UTC)`,
  );
  return 'UTC';
}
