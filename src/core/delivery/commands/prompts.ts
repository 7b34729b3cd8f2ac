import type { PromptSpec } from '../../ports/prompts.ts';

export interface PromptCommand {
  server: string;
  name: string;
  args: Record<string, string>;
}

/** `key=value`, `key="two words"` or `key='two words'`; else one bare word. */
const TOKEN = /(\w[\w.-]*)=(?:"([^"]*)"|'([^']*)'|(\S*))|(\S+)/g;

/** The words after the command: a server, a prompt, then its arguments as key=value. */
export function parsePromptCommand(text: string): PromptCommand | { problem: string } {
  const words: string[] = [];
  const args: Record<string, string> = {};
  for (const [, key, double, single, plain, word] of text.matchAll(TOKEN)) {
    if (key) args[key] = double ?? single ?? plain ?? '';
    else words.push(word!);
  }
  const [server, name, ...rest] = words;
  if (!server || !name) return { problem: 'Name a server and one of its prompts.' };
  if (rest.length > 0)
    return { problem: `Write a prompt's arguments as name=value (not "${rest.join(' ')}").` };
  return { server, name, args };
}

/** The command as people use it, with an argument's name and whether it is needed. */
const usage = (prompt: PromptSpec) =>
  [
    `${prompt.server} ${prompt.name}`,
    ...prompt.arguments.map((a) => (a.required ? `${a.name}=…` : `[${a.name}=…]`)),
  ].join(' ');

/** Every prompt on offer, one a line, for a command with nothing or something wrong in it. */
export function promptList(prompts: PromptSpec[]): string {
  if (prompts.length === 0) return 'No tool server offers prompts here.';
  return [
    'Prompts:',
    ...prompts.map((p) => `• \`${usage(p)}\`${p.description ? `: ${p.description}` : ''}`),
  ].join('\n');
}

/** What is wrong with the command for this prompt: unknown or missing arguments. */
export function promptProblem(command: PromptCommand, prompts: PromptSpec[]): string | undefined {
  const prompt = prompts.find((p) => p.server === command.server && p.name === command.name);
  if (!prompt)
    return `There is no prompt \`${command.server} ${command.name}\`.\n${promptList(prompts)}`;
  const known = new Set(prompt.arguments.map((a) => a.name));
  const unknown = Object.keys(command.args).filter((a) => !known.has(a));
  const missing = prompt.arguments.filter((a) => a.required && !command.args[a.name]);
  const problems = [
    ...(unknown.length ? [`it takes no ${unknown.join(', ')}`] : []),
    ...(missing.length ? [`it needs ${missing.map((a) => a.name).join(', ')}`] : []),
  ];
  return problems.length
    ? `\`${command.server} ${command.name}\`: ${problems.join('; ')}. Usage: \`${usage(prompt)}\``
    : undefined;
}
