/** The values mcp.json's entries are made of: strings with ${VARS}, lists, maps; and its error. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

export type Env = Record<string, string | undefined>;

/**
 * `${VAR}`, Cursor's `${env:VAR}` and `${VAR:-default}` from the environment. The bot's own
 * secrets are refused: a tool server must never see them, even when a config asks for them.
 */
export function expand(value: string, env: Env, secretNames: ReadonlySet<string>): string {
  return value.replace(
    /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_, name: string, fallback: string | undefined) => {
      if (secretNames.has(name))
        throw new McpConfigError(
          `\${${name}} is Spool's own secret and is never passed to a tool server`,
        );
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new McpConfigError(`\${${name}} is not set`);
    },
  );
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function stringList(value: unknown, key: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new McpConfigError(`"${key}" must be an array of strings`);
  return value;
}

export function stringMap(
  value: unknown,
  key: string,
  env: Env,
  secrets: ReadonlySet<string>,
): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw new McpConfigError(`"${key}" must map names to strings`);
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, expand(v as string, env, secrets)]),
  );
}
