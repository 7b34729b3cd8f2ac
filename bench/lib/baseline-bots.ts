/**
 * The baselines of the context benchmark, each a bot that could really run: one loop over the
 * same tools and the same model window, the whole history sent on every request and never
 * compacted. They differ only in what a tool result becomes:
 * - naive: the whole result;
 * - head+tail 16k: results over 16,000 chars cut to their first 12,000 and last 4,000, with
 *   nothing more to read (OpenClaw's shape);
 * - head + read: a 4,000-char head, and a tool that reads the stored result on from an offset,
 *   pages staying in the history (Hermes's shape);
 * - memoryless: the whole result, as naive, but each turn sends only its own messages: it reads
 *   each document once and pays for no earlier turn, the least a thread's script allows (it
 *   cannot answer what an earlier turn saw: a floor for cost, not a bot to use).
 * A request over the window is refused by the server, as the API refuses it: the turn fails.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import {
  isParked,
  type ParkedCall,
  type Tool,
  type ToolOutcome,
} from '../../src/core/ports/tools.ts';

export type Baseline = 'naive' | 'head+tail 16k' | 'head + read' | 'memoryless';

const PAGE_CHARS = 20_000;
const readOn = (id: string, offset: number) =>
  `Read on with get_continuation(tool_call_id="${id}", offset=${offset})`;

const readTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_continuation',
    description: 'Read more of a truncated tool result, from an offset.',
    parameters: {
      type: 'object',
      properties: { tool_call_id: { type: 'string' }, offset: { type: 'integer' } },
      required: ['tool_call_id', 'offset'],
    },
  },
};

export class BaselineBot {
  private readonly history: ChatCompletionMessageParam[] = [];
  private readonly stored = new Map<string, string>();
  private ids = 0;

  constructor(
    private readonly shape: Baseline,
    private readonly client: OpenAI,
    private readonly model: string,
    private readonly tools: Tool[],
  ) {}

  /** The reply, or undefined when the turn failed (its request did not fit the window). */
  async turn(text: string): Promise<string | undefined> {
    if (this.shape === 'memoryless') this.history.length = 0;
    this.history.push({ role: 'user', content: text });
    for (let step = 0; step < 60; step++) {
      let message: OpenAI.Chat.Completions.ChatCompletionMessage;
      try {
        const completion = await this.client.chat.completions.create({
          model: this.model,
          max_tokens: 256,
          messages: [{ role: 'system', content: 'You are a helpful assistant.' }, ...this.history],
          tools: this.specs(),
        });
        message = completion.choices[0]!.message;
      } catch (error) {
        if (error instanceof OpenAI.APIError && error.status === 400) return undefined;
        throw error;
      }
      // Ids of our own, as every real server gives: the scripted models reuse theirs.
      const calls = (message.tool_calls ?? []).flatMap((c) =>
        c.type === 'function' ? [{ ...c, id: `call_${this.ids++}` }] : [],
      );
      if (calls.length === 0) {
        this.history.push({ role: 'assistant', content: message.content ?? '' });
        return message.content ?? '';
      }
      this.history.push({ role: 'assistant', content: message.content, tool_calls: calls });
      for (const call of calls)
        this.history.push({
          role: 'tool',
          tool_call_id: call.id,
          content: await this.run(
            call.id,
            call.function.name,
            JSON.parse(call.function.arguments) as Record<string, unknown>,
          ),
        });
    }
    return undefined;
  }

  private specs(): ChatCompletionTool[] {
    const own: ChatCompletionTool[] = this.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.spec.name,
        description: t.spec.description,
        parameters: t.spec.parameters,
      },
    }));
    return this.shape === 'head + read' ? [...own, readTool] : own;
  }

  private async run(id: string, name: string, args: Record<string, unknown>): Promise<string> {
    if (name === 'get_continuation') {
      const full = this.stored.get(String(args.tool_call_id)) ?? '';
      const offset = Number(args.offset);
      const end = Math.min(full.length, offset + PAGE_CHARS);
      return `${full.slice(offset, end)}\n[showing ${offset}-${end}/${full.length} chars${end < full.length ? `. ${readOn(String(args.tool_call_id), end)}` : ''}]`;
    }
    const tool = this.tools.find((t) => t.spec.name === name);
    const outcome: ToolOutcome | ParkedCall = tool
      ? await tool.run(args, {
          conversation: {
            id: 'bench',
            platform: 'bench',
            workspace: 'bench',
            channel: 'bench',
            thread: 'bench',
          },
          turn: 0,
          signal: new AbortController().signal,
          reading: { transcript: [], viewChars: 0 },
        })
      : { content: `no tool ${name}`, isError: true };
    // The baselines run the built-in tools only, which never park.
    if (isParked(outcome)) throw new Error(`${name} parked: the baselines run no tasks`);
    const { content } = outcome;
    this.stored.set(id, content);
    if (
      this.shape === 'naive' ||
      this.shape === 'memoryless' ||
      content.length <= (this.shape === 'head+tail 16k' ? 16_000 : 4_000)
    )
      return content;
    if (this.shape === 'head+tail 16k')
      return `${content.slice(0, 12_000)}\n[… ${content.length - 16_000} chars truncated …]\n${content.slice(-4_000)}`;
    return `${content.slice(0, 4_000)}\n[truncated — showing 4000/${content.length} chars. ${readOn(id, 4_000)}]`;
  }
}
