import type { SlashCommand } from '@slack/bolt';
import {
  FileRefusedError,
  NotRecordedError,
  type InboundMessage,
} from '../../../core/ports/platform/delivery.ts';
import { commandFailureReply } from '../../../core/delivery/commands/commands.ts';
import { NOT_RECORDED_REPLY } from '../../../core/delivery/engine/engine.ts';
import { resultAsFile, resultAsMessages } from '../../../core/delivery/commands/stored-result.ts';
import { namingFor } from '../../../core/delivery/commands/naming.ts';
import { recallAnswer, typedCommand } from '../../../core/delivery/commands/typed-command.ts';
import { errorMessage } from '../../../core/errors.ts';
import { usageChartPng } from '../../shared/chart.ts';
import { uploadFile } from '../files.ts';
import { linkButtons } from '../link-buttons.ts';
import { keyIn, type Respond, type SlackParts } from '../parts.ts';
import { scheduleCommand } from '../schedules.ts';
import { SLACK_HELP, SLACK_REFUSAL, slackChunks } from '../text.ts';

type Lane = InboundMessage['lane'];

/** `/spool`: acknowledged at once, answered through response_url, only to the person who asked. */
export function listenForCommands(parts: SlackParts): void {
  parts.app.command('/spool', async ({ command, ack, respond }) => {
    await ack();
    // Whatever fails, the person hears it.
    await spoolCommand(parts, command, respond).catch(async (error: unknown) => {
      parts.logger.error('Slack: /spool failed', {
        verb: command.text.trim().split(/\s+/)[0] ?? '',
        error: errorMessage(error),
      });
      await respond({ response_type: 'ephemeral', text: commandFailureReply(error) });
    });
  });
}

/** `/spool <verb> …`, acknowledged already. */
async function spoolCommand(
  parts: SlackParts,
  command: SlashCommand,
  respond: Respond,
): Promise<void> {
  const lane = {
    platform: 'slack',
    workspace: command.team_id,
    channel: command.channel_id,
    thread: '',
  };
  const user = command.user_id;
  const asked = typedCommand(command.text);
  switch (asked.verb) {
    case 'result':
      return sendResult(parts, lane, user, asked.toolCallId, respond);
    case 'prompt':
      return askWithPrompt(parts, lane, user, asked.command, respond);
    case 'usage':
      if (asked.problem)
        return void (await respond({ response_type: 'ephemeral', text: asked.problem }));
      return sendUsage(parts, lane, user, asked.chart, respond);
    case 'logins': {
      const text = await parts.delivery.logins({ lane, user }, namingFor('slack'));
      return respondAll(respond, text === 'refused' ? SLACK_REFUSAL : text);
    }
    case 'login': {
      const text = await parts.delivery.login({ lane, user }, asked.server);
      return respondAll(respond, text === 'refused' ? SLACK_REFUSAL : text);
    }
    case 'logout': {
      const text = await parts.delivery.logout({ lane, user }, asked.command, namingFor('slack'));
      return respondAll(respond, text === 'refused' ? SLACK_REFUSAL : text);
    }
    case 'schedule':
      return scheduleCommand(parts, lane, user, asked.words, respond);
    case 'help':
      return void (await respond({ response_type: 'ephemeral', text: SLACK_HELP }));
    case 'recall': {
      const text = await recallAnswer(parts.delivery, { lane, user }, asked.query);
      return respondAll(respond, text ?? SLACK_REFUSAL);
    }
  }
}

/** Text only the person sees, in as many messages as it takes. */
async function respondAll(respond: Respond, text: string): Promise<void> {
  for (const chunk of slackChunks(text)) await respond({ response_type: 'ephemeral', text: chunk });
}

/**
 * `/spool usage`: what the person has spent here (everyone's, for an admin), only to them.
 * `/spool usage chart` adds the last 30 days as a chart in a direct message: an ephemeral
 * message cannot carry an uploaded image.
 */
async function sendUsage(
  { clients, delivery, logger }: SlackParts,
  lane: Lane,
  user: string,
  chart: boolean,
  respond: Respond,
): Promise<void> {
  const report = await delivery.usage({ lane, user }, namingFor('slack'));
  await respondAll(respond, report === 'refused' ? SLACK_REFUSAL : report.text);
  if (!chart || report === 'refused') return;
  const client = await clients.of(lane.workspace);
  try {
    const dm = await client.conversations.open({ users: user });
    await client.files.uploadV2({
      channel_id: dm.channel?.id ?? user,
      file: usageChartPng(report.days, report.currency),
      filename: 'usage.png',
      title: 'Usage, last 30 days',
    });
    await respond({
      response_type: 'ephemeral',
      text: 'Sent you the chart of the last 30 days in a direct message.',
    });
  } catch (error) {
    logger.warn('Slack: could not send the usage chart', { error: errorMessage(error) });
    await respond({
      response_type: 'ephemeral',
      text: `Sorry, I could not send the chart: ${errorMessage(error)}.`,
    });
  }
}

/**
 * `/spool prompt <server> <prompt> name=value…`: a slash command has no thread, so Spool starts
 * one, saying who asked with which prompt, and the prompt's text is their message in it.
 */
async function askWithPrompt(
  { clients, config, delivery }: SlackParts,
  lane: Lane,
  user: string,
  command: string,
  respond: Respond,
): Promise<void> {
  const asked = await delivery.promptText({ lane, user }, command);
  if ('problem' in asked) return respondAll(respond, asked.problem);
  const [server, name] = command.trim().split(/\s+/);
  const client = await clients.of(lane.workspace);
  const anchor = await client.chat.postMessage({
    channel: lane.channel,
    text: `<@${user}> asked with the prompt \`${server} ${name}\`.`,
  });
  const ts = anchor.ts!;
  const handled = await delivery
    .handleIncoming({
      lane: { ...lane, thread: ts },
      messageKey: keyIn(config, lane.workspace, `${lane.channel}:${ts}`),
      kind: 'message',
      user,
      text: asked.text,
      delivery: { ts },
    })
    .catch((error: unknown) => {
      if (!(error instanceof NotRecordedError)) throw error;
      return undefined;
    });
  if (!handled) await respond({ response_type: 'ephemeral', text: NOT_RECORDED_REPLY });
}

/**
 * A stored result, whole, as a file in a direct message to the person who asked: it never lands
 * in the channel.
 */
async function sendResult(
  { clients, delivery, logger }: SlackParts,
  lane: Lane,
  user: string,
  toolCallId: string,
  respond: Respond,
): Promise<void> {
  const found = await delivery.result({ lane, user }, toolCallId);
  if (found === 'refused')
    return void (await respond({ response_type: 'ephemeral', text: SLACK_REFUSAL }));
  const { text, file, links } = resultAsFile(toolCallId, found);
  if (!file) return void (await respond({ response_type: 'ephemeral', text }));
  const client = await clients.of(lane.workspace);
  try {
    const dm = await client.conversations.open({ users: user });
    const channel = dm.channel?.id ?? user;
    await uploadFile(client, { channel }, text, file).catch(async (error: unknown) => {
      if (!(error instanceof FileRefusedError)) throw error;
      // As code, so that the result reads as it is and nothing in it pings anyone.
      const render = (content: string) => slackChunks(`\`\`\`\n${content}\n\`\`\``);
      for (const chunk of resultAsMessages({ text, file }, error.message, render))
        await client.chat.postMessage({
          channel,
          text: chunk,
          unfurl_links: false,
          unfurl_media: false,
        });
    });
    const sent = 'Sent you the full result in a direct message.';
    await respond({
      response_type: 'ephemeral',
      text: sent,
      ...(links
        ? {
            blocks: [{ type: 'section', text: { type: 'mrkdwn', text: sent } }, linkButtons(links)],
          }
        : {}),
    });
  } catch (error) {
    logger.warn('Slack: could not send a stored result', { error: errorMessage(error) });
    await respond({
      response_type: 'ephemeral',
      text: `Sorry, I could not send the result: ${errorMessage(error)}. Please try again.`,
    });
  }
}
