/**
 * How a module reads its own section of the settings. Each module declares and validates its
 * section through this; a bad value is recorded as a problem naming it, and every problem is
 * reported at once (src/config.ts reads the environment behind it).
 */
export interface SettingsReader {
  /** The value, trimmed; undefined when unset or empty. A secret may come from `<NAME>_FILE`. */
  string(name: string): string | undefined;
  int(name: string, fallback: number, min?: number): number;
  /** `true` or `false`. */
  flag(name: string, fallback: boolean): boolean;
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T;
  /** Comma-separated values; undefined when there are none. */
  list(name: string): string[] | undefined;
  /** An http(s) URL, without trailing slashes. */
  url(name: string): string | undefined;
  /** The contents of the file the setting names. */
  file(name: string): string | undefined;
  problem(text: string): void;
  /** The bot's own secrets, for masking wherever text leaves or is stored. */
  secrets(): string[];
}
