import type { ToolContext, ToolOutcome, ToolPort, ToolSpec } from '../core/ports/tools.ts';

export interface Tool {
  spec: ToolSpec;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}

/** A set of tools that can change over time (an MCP server reconnects, lists again). */
export interface ToolSource {
  tools(): Tool[];
  close(): Promise<void>;
}

export const errorOutcome = (message: string): ToolOutcome => ({ content: JSON.stringify({ error: message }), isError: true });

/** Every source's tools behind the core's tool port. */
export class ToolRegistry implements ToolPort {
  constructor(private readonly sources: ToolSource[]) {}

  private tools(): Map<string, Tool> {
    const byName = new Map<string, Tool>();
    for (const source of this.sources) {
      for (const tool of source.tools()) if (!byName.has(tool.spec.name)) byName.set(tool.spec.name, tool);
    }
    return byName;
  }

  list(): ToolSpec[] {
    return [...this.tools().values()].map((t) => t.spec);
  }

  async call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.tools().get(name);
    if (!tool) return errorOutcome(`Tool "${name}" is not available right now.`);
    try {
      return await tool.run(args, context);
    } catch (error) {
      return errorOutcome(`${name} failed: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.sources.map((s) => s.close()));
  }
}

/** Tools that live in this process. */
export function builtinSource(tools: Tool[]): ToolSource {
  return { tools: () => tools, close: async () => {} };
}
