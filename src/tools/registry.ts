import type { ConversationKey } from '../core/ports/conversation.ts';
import type {
  ParkedCall,
  Tool,
  ToolContext,
  ToolOutcome,
  ToolPort,
  ToolSpec,
} from '../core/ports/tools.ts';

/** A set of tools that can change over time (an MCP server reconnects, lists again). */
export interface ToolSource {
  tools(): Tool[];
  close(): Promise<void>;
  /** See ToolPort.resumable: the calls this source follows as tasks. */
  resumable?(toolCallIds: string[]): Promise<Set<string>>;
  /** See ToolPort.cancelTasks. */
  cancelTasks?(conversation: ConversationKey): Promise<void>;
}

/** Every source's tools behind the core's tool port; the first source to name a tool wins. */
export class ToolRegistry implements ToolPort {
  constructor(private readonly sources: ToolSource[]) {}

  private tools(): Map<string, Tool> {
    const byName = new Map<string, Tool>();
    for (const source of this.sources) {
      for (const tool of source.tools())
        if (!byName.has(tool.spec.name)) byName.set(tool.spec.name, tool);
    }
    return byName;
  }

  list(): ToolSpec[] {
    return [...this.tools().values()].map((t) => t.spec);
  }

  call(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<ToolOutcome | ParkedCall> {
    const tool = this.tools().get(name);
    // Listed when the turn began, gone now: its server is restarting.
    if (!tool) throw new Error('it is not available right now');
    return tool.run(args, context);
  }

  async resumable(toolCallIds: string[]): Promise<Set<string>> {
    const each = await Promise.all(this.sources.map((s) => s.resumable?.(toolCallIds)));
    return new Set(each.flatMap((ids) => [...(ids ?? [])]));
  }

  async cancelTasks(conversation: ConversationKey): Promise<void> {
    await Promise.all(this.sources.map((s) => s.cancelTasks?.(conversation)));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.sources.map((s) => s.close()));
  }
}

/** Tools that live in this process. */
export function builtinSource(tools: Tool[]): ToolSource {
  return { tools: () => tools, close: async () => {} };
}
