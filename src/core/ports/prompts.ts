/**
 * The prompts port: prompts tool servers offer people (MCP `prompts/*`), run as commands. A
 * prompt's text becomes the person's message, as if they had typed it.
 */

export interface PromptSpec {
  /** The server's name in mcp.json. */
  server: string;
  name: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required: boolean }>;
}

export interface PromptPort {
  list(): PromptSpec[];
  /** The prompt's messages as text. Throws when its server cannot give it now. */
  render(server: string, name: string, args: Record<string, string>): Promise<string>;
}
