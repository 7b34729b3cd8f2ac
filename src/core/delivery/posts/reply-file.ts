import type { ReplyFile, ReplyPart } from '../../ports/platform/delivery.ts';

/** File extensions of the languages models tag code blocks with most. */
const EXTENSIONS: Record<string, string> = {
  python: 'py',
  py: 'py',
  javascript: 'js',
  js: 'js',
  typescript: 'ts',
  ts: 'ts',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  bash: 'sh',
  sh: 'sh',
  shell: 'sh',
  sql: 'sql',
  go: 'go',
  rust: 'rs',
  java: 'java',
  csharp: 'cs',
  c: 'c',
  cpp: 'cpp',
  ruby: 'rb',
  php: 'php',
  html: 'html',
  css: 'css',
  xml: 'xml',
  csv: 'csv',
  diff: 'diff',
  markdown: 'md',
  md: 'md',
};

/**
 * A long reply as one message and one file: the reply itself as Markdown, or, when it is nothing
 * but one code block, that code with its language. The name carries the inbox row, so a file
 * posted before a crash is found again instead of posted twice.
 */
export function replyAsFile(reply: string, inboxId: string): ReplyPart {
  const code = /^\s*```([\w+-]*)\n([\s\S]*?)\n```\s*$/.exec(reply);
  const onlyCode = code && !code[2]!.includes('```');
  const language = onlyCode ? code[1]!.toLowerCase() || undefined : 'markdown';
  const name = `reply-${inboxId}.${(language && EXTENSIONS[language]) ?? (onlyCode ? 'txt' : 'md')}`;
  const text = `The reply is ${reply.length.toLocaleString('en-US')} characters long, so here it is as a file, ${name}.`;
  return {
    text,
    file: { name, content: onlyCode ? code[2]! : reply, ...(language ? { language } : {}) },
  };
}

/** The reply a file of `replyAsFile` holds, as text again: for a platform that refused the file. */
export function replyOfFile(file: ReplyFile): string {
  return file.language === 'markdown'
    ? file.content
    : `\`\`\`${file.language ?? ''}\n${file.content}\n\`\`\``;
}
