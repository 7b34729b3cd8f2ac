import type { WebClient } from '@slack/web-api';
import { slackText } from './message.ts';

/** A channel message a request is about: its thread, what it says, and who wrote it. */
export interface Subject {
  thread: string;
  text: string;
  author: string;
}

/** The message at `ts` in the channel, top-level or in a thread; none where it cannot be read. */
export async function messageAt(
  client: WebClient,
  channel: string,
  ts: string,
): Promise<Subject | undefined> {
  const found = await client.conversations
    .replies({ channel, ts, latest: ts, inclusive: true, limit: 200 })
    .catch(() => undefined);
  const message = found?.messages?.find((m) => m.ts === ts);
  if (!message) return undefined;
  return {
    thread: message.thread_ts ?? ts,
    text: message.text ?? '',
    author: message.user ?? message.bot_id ?? 'unknown',
  };
}

/** The subject as the model reads it after the request's own words: who wrote it, quoted. */
export function quotedSubject(subject: Subject): string {
  const quoted = slackText(subject.text)
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  return `The message (from <@${subject.author}>):\n${quoted}`;
}
