import { writeFile } from 'node:fs/promises';
import { namingFor } from '../../core/delivery/commands/naming.ts';
import { resultAsFile } from '../../core/delivery/commands/stored-result.ts';
import { usageArguments } from '../../core/delivery/commands/usage-report.ts';
import { errorMessage } from '../../core/errors.ts';
import type { InboundMessage } from '../../core/ports/platform/delivery.ts';
import type { Delivery } from '../../core/ports/platform/platform.ts';
import { linkLines } from './outbound.ts';

type Lane = InboundMessage['lane'];

const NOT_KEPT = 'Sign-ins are not kept here.';

/** `/usage`: what was spent in the console, today, this week and this month. */
async function usageText(delivery: Delivery, lane: Lane): Promise<string> {
  const report = await delivery.usage({ lane, user: 'local' }, namingFor('console'));
  return report === 'refused' ? 'Usage is not kept here.' : report.text;
}

/**
 * `/result <tool_call_id> <path>`: the whole stored result, written to a file; says what happened.
 */
async function writeResult(
  delivery: Delivery,
  lane: Lane,
  toolCallId: string,
  path: string,
): Promise<string> {
  const found = await delivery.result({ lane, user: 'local' }, toolCallId);
  const { text, file, links } = resultAsFile(toolCallId, found === 'refused' ? undefined : found);
  if (!file) return text;
  try {
    await writeFile(path, file.content);
    return [`${text} Written to ${path}.`, ...linkLines(links)].join('\n');
  } catch (error) {
    return `Could not write ${path}: ${errorMessage(error)}`;
  }
}

/**
 * What an input line asks for: a command's answer to print (`/result`, `/usage`, `/schedule`,
 * `/login SERVER`, `/logins`, `/logout SERVER`, a `/prompt` that cannot be given), or the text of
 * a message to answer (the line itself, or a prompt's text).
 */
export async function readLine(
  delivery: Delivery,
  lane: Lane,
  text: string,
): Promise<{ print: string } | { say: string }> {
  const result = /^\/result\s+(\S+)\s+(.+)$/.exec(text);
  if (result) return { print: await writeResult(delivery, lane, result[1]!, result[2]!) };
  const usage = /^\/usage(?:\s+(.*))?$/.exec(text);
  if (usage) {
    const asked = usageArguments(usage[1] ?? '', { command: '/usage', accepted: [] });
    return { print: 'problem' in asked ? asked.problem : await usageText(delivery, lane) };
  }
  if (/^\/logins\s*$/.test(text)) {
    const listed = await delivery.logins({ lane, user: 'local' }, namingFor('console'));
    return { print: listed === 'refused' ? NOT_KEPT : listed };
  }
  const login = /^\/login\s+(\S+)\s*$/.exec(text);
  if (login) {
    const said = await delivery.login({ lane, user: 'local' }, login[1]!);
    return { print: said === 'refused' ? NOT_KEPT : said };
  }
  const logout = /^\/logout(?:\s+(.*))?$/.exec(text);
  if (logout) {
    const said = await delivery.logout(
      { lane, user: 'local' },
      logout[1] ?? '',
      namingFor('console'),
    );
    return { print: said === 'refused' ? NOT_KEPT : said };
  }
  const schedule = /^\/schedule(?:\s+([\s\S]*))?$/.exec(text);
  if (schedule) {
    const answer = await delivery.schedule({ lane, user: 'local' }, schedule[1] ?? '');
    return { print: answer ?? 'Schedules are not available here.' };
  }
  const prompted = /^\/prompt(?:\s+(.*))?$/.exec(text);
  if (!prompted) return { say: text };
  const asked = await delivery.promptText({ lane, user: 'local' }, prompted[1] ?? '');
  return 'problem' in asked ? { print: asked.problem } : { say: asked.text };
}
