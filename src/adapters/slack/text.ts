import { toMrkdwn } from './mrkdwn/mrkdwn.ts';
import { splitMessage } from '../shared/split-message.ts';

/** Slack renders up to 40,000 chars but folds long messages; 3,500 keeps each one readable. */
export const SLACK_MESSAGE_LIMIT = 3_500;
export const SLACK_REFUSAL = "Sorry, I'm not enabled for you in this channel.";

/** Markdown from the model as Slack mrkdwn, split under Slack's limit. */
export function toSlackMessages(markdown: string): string[] {
  return splitMessage(toMrkdwn(markdown).trim() || markdown, SLACK_MESSAGE_LIMIT);
}

/** Text Spool wrote itself (already mrkdwn), split under Slack's limit. */
export const slackChunks = (text: string): string[] => splitMessage(text, SLACK_MESSAGE_LIMIT);

export const SLACK_HELP = [
  '*Spool* answers in threads. Mention me in a channel, or message me directly; in a thread I have joined, just keep talking.',
  '• `/spool recall <words>`: earlier tool runs and messages in this channel that match (only you see the answer).',
  '• `/spool result <tool_call_id>`: the whole result of a tool run recall found, as a file in a direct message.',
  '• `/spool prompt <server> <prompt> name=value…`: ask with a prompt a tool server offers, in a thread of its own (`/spool prompt` lists them).',
  '• `/spool usage [chart]`: what you spent here today, this week and this month (everything, for an admin), only to you; `chart` adds the last 30 days in a direct message.',
  "• `/spool logins`: the tool servers you are signed in to as yourself (everyone's, for an admin); `/spool logout <server>` ends yours (an admin: `/spool logout <server> @person`).",
  '• `/spool schedule "every weekday at 9:00" <prompt>`: run a prompt on its own, each time in a new thread here (`/spool schedule list`, `/spool schedule cancel <id>`).',
  '• `/spool help`: this message.',
].join('\n');
