import type { Client } from '@modelcontextprotocol/client';
import {
  SkillsClient,
  SkillVerificationError,
  type Skill,
} from '@modelcontextprotocol/client/ext/skills';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { errorResult, type Tool, type ToolOutcome } from '../../core/ports/tools.ts';

/** The tool Spool adds for a server that offers skills (SEP-2640): `<server>__load_skill`. */
export const LOAD_SKILL = 'load_skill';
/** How many of a server's skills its load_skill tool names. */
const LISTED_SKILLS = 50;

/**
 * A server's skills, as listed when Spool connected: only their entries (names, descriptions,
 * digests). No file of a skill is read before the model loads it (SEP-2640: never on connection,
 * listing or approval).
 */
export class ServerSkills {
  private constructor(
    private readonly client: SkillsClient,
    readonly skills: Skill[],
  ) {}

  /** The skills of a server that declares the extension; none of one that does not. */
  static async list(
    client: Client,
    server: string,
    logger: Logger,
  ): Promise<ServerSkills | undefined> {
    const skills = new SkillsClient(client, { skipInvalid: true });
    if (!skills.supported) return undefined;
    try {
      const listing = await skills.list();
      for (const refused of listing.invalid)
        logger.warn(
          `MCP server "${server}": skill ${refused.uri ?? `#${refused.index}`} left off: ${refused.reason}`,
        );
      return new ServerSkills(skills, listing.skills);
    } catch (error) {
      logger.warn(`MCP server "${server}" did not list its skills: ${errorMessage(error)}`);
      return undefined;
    }
  }

  /**
   * One file of a skill, its SKILL.md unless `file` names another, checked against the entry
   * (size, digest, and SKILL.md's frontmatter): content that fails is never given to the model.
   */
  async read(name: string, file: string | undefined, server: string): Promise<ToolOutcome> {
    const skill = this.skills.find((s) => s.frontmatter.name === name);
    if (!skill)
      return errorResult(
        `MCP server "${server}" has no skill "${name}"; it has: ${this.skills.map((s) => s.frontmatter.name).join(', ')}.`,
      );
    try {
      const read = await this.client.read(skill, file || undefined);
      const text = read.body ?? read.text;
      if (text === undefined)
        return errorResult(
          `${read.uri} is not text (${read.mimeType ?? 'no type'}); it was not loaded.`,
        );
      return { content: text, isError: false };
    } catch (error) {
      if (error instanceof SkillVerificationError)
        return errorResult(
          `Skill "${name}" of MCP server "${server}" was not loaded: ${error.uri} does not match what the server listed (${error.reason}${error.differences.length ? `: ${error.differences.join('; ')}` : ''}).`,
        );
      return errorResult(
        `Loading skill "${name}" of MCP server "${server}" failed: ${errorMessage(error)}`,
      );
    }
  }
}

/** Loading a server's skill as a tool: the skills named, with what each is for. */
export function skillLoader(
  server: string,
  skills: () => ServerSkills | undefined,
): Tool | undefined {
  const listed = skills()?.skills.slice(0, LISTED_SKILLS) ?? [];
  if (listed.length === 0) return undefined;
  const names = listed.map((s) => s.frontmatter.name);
  return {
    spec: {
      name: LOAD_SKILL,
      description:
        `Load a skill of MCP server "${server}": its instructions (SKILL.md), or one of its files when it refers to them. Skills: ` +
        listed.map((s) => `${s.frontmatter.name} (${s.frontmatter.description})`).join('; '),
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', enum: names, description: 'The skill.' },
          file: {
            type: 'string',
            description:
              "A file the skill's instructions refer to, relative to the skill (references/FORMS.md); its SKILL.md when left out.",
          },
        },
        required: ['name'],
        additionalProperties: false,
      },
      flags: { readOnly: true },
    },
    run: async (args) => {
      const current = skills();
      if (!current) return errorResult(`MCP server "${server}" offers no skills right now.`);
      if (typeof args.name !== 'string' || !args.name)
        return errorResult('name must be a skill name');
      return current.read(args.name, typeof args.file === 'string' ? args.file : undefined, server);
    },
  };
}
