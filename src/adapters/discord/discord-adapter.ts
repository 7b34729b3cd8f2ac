import { createHash } from 'node:crypto';
import {
  Client,
  DiscordAPIError,
  Events,
  GatewayDispatchEvents,
  GatewayIntentBits,
  MessageFlags,
  PermissionFlagsBits,
  Routes,
  SlashCommandBuilder,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type ModalSubmitInteraction,
  type GatewayDispatchPayload,
  type Interaction,
  type RESTOptions,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { Dispatcher } from 'undici';
import {
  FileRefusedError,
  type ApprovalButtons,
  type InboundKind,
  type InboundMessage,
  type ReplyFile,
} from '../../core/ports/delivery.ts';
import type {
  Asker,
  Delivery,
  FormClickOutcome,
  Handled,
  Outbound,
  OutgoingChunk,
  PlatformAdapter,
} from '../../core/ports/platform.ts';
import { clickReply } from '../../core/delivery/approval-text.ts';
import { formClickReply } from '../../core/delivery/forms.ts';
import type { FormAnswer } from '../../core/ports/forms.ts';
import {
  FORM_BUTTON,
  FORM_MODAL,
  formComponents,
  formModal,
  MODAL_FIELDS,
  modalValues,
  tooManyFields,
} from './form-modal.ts';
import {
  answeringCommands,
  commandFailureReply,
  sayingSlow,
} from '../../core/delivery/commands.ts';
import type { Logger } from '../../core/logger.ts';
import { resultAsFile, resultAsMessages } from '../../core/delivery/stored-result.ts';
import { formatHits } from '../../core/builtins/search-history.ts';
import type { DiscordSettings } from './settings.ts';
import { fetchFileBytes, servedFrom } from '../shared/fetch-file.ts';
import { splitMessage } from '../shared/split-message.ts';
import { usageChartPng } from '../shared/chart.ts';
import { discordRequest } from './rest-request.ts';
import { errorMessage } from '../../core/errors.ts';

export const DISCORD_MESSAGE_LIMIT = 2_000;
/** Discord's codes for an interaction token that expired (15 minutes) or is unknown. */
const EXPIRED_TOKEN_CODES = new Set([50027, 10015]);
/**
 * Only for replies that outlive an interaction, posted to the channel: View Channel (which a
 * private channel needs before anything can be posted there), Send Messages, Send Messages in
 * Threads.
 */
const INVITE_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads;
/** Nobody is ever pinged by a reply: not @everyone, not @here, not a role, not a user. */
const NO_MENTIONS = { parse: [] as never[] };
/** A command not answered by then is deferred: Discord takes no answer after 3 s. */
const DEFER_AFTER_MS = 2_000;

export interface DiscordAdapterConfig extends DiscordSettings {
  /**
   * REST calls go through this (a proxy). The gateway does not: discord.js opens it with the `ws`
   * package and takes no agent for it.
   */
  dispatcher?: Dispatcher;
}

export const DISCORD_COMMANDS: RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  new SlashCommandBuilder()
    .setName('ask')
    .setDescription('Ask Spool; later /ask calls here continue the conversation')
    .addStringOption((o) =>
      o
        .setName('prompt')
        .setDescription('What you want to ask')
        .setRequired(true)
        .setMaxLength(4000),
    )
    .addAttachmentOption((o) =>
      o
        .setName('file')
        .setDescription('A file to ask about: a log, a CSV, code, a PDF')
        .setRequired(false),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('recall')
    .setDescription('Find earlier tool runs and messages in this channel')
    .addStringOption((o) =>
      o.setName('query').setDescription('Words to look for').setRequired(true),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('result')
    .setDescription('The whole result of a tool run that /recall found, as a file only you see')
    .addStringOption((o) =>
      o.setName('id').setDescription('The tool_call_id /recall shows').setRequired(true),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('prompt')
    .setDescription('Ask with a prompt a tool server offers; /prompt with a wrong name lists them')
    .addStringOption((o) =>
      o.setName('server').setDescription('The tool server, as mcp.json names it').setRequired(true),
    )
    .addStringOption((o) =>
      o.setName('name').setDescription("The server's prompt").setRequired(true),
    )
    .addStringOption((o) =>
      o
        .setName('arguments')
        .setDescription('The prompt\'s arguments: name=value, or name="several words"')
        .setRequired(false),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('usage')
    .setDescription('What you spent here today, this week and this month, only to you')
    .toJSON(),
  new SlashCommandBuilder()
    .setName('new')
    .setDescription('Start a fresh conversation in this channel or thread')
    .toJSON(),
  new SlashCommandBuilder().setName('help').setDescription('What Spool can do').toJSON(),
];

/**
 * A reply's file as discord.js sends it, and the attachment list that makes it the message's only
 * one.
 */
function attached(file: ReplyFile | undefined): {
  files?: Array<{ name: string; data: Buffer }>;
  attachments: { attachments?: Array<{ id: number; filename: string }> };
} {
  if (!file) return { attachments: {} };
  return {
    files: [{ name: file.name, data: Buffer.from(file.content) }],
    attachments: { attachments: [{ id: 0, filename: file.name }] },
  };
}

/** A button's custom_id names the decision and the call: `spool:approve:<tool_call_id>`. */
const APPROVAL_BUTTON = /^spool:(approve|deny):(.+)$/;
const WAITING_FOR_APPROVAL = 'Waiting for an approver…';
const WAITING_FOR_ANSWER = 'Waiting for your answer…';
/** The deferred response while Spool works: its status, marked as one. */
const WORKING_MARK = '⏳ Spool is ';
const workingLine = (status: string) => `${WORKING_MARK}${status}…`;
export const isWorkingLine = (content: unknown) =>
  typeof content === 'string' && content.startsWith(WORKING_MARK);

/** Stop, under the working line: its custom_id names the message whose turn it stops. */
const STOP_BUTTON = /^spool:stop:(.+)$/;
const stopComponents = (messageKey: string) => [
  {
    type: 1,
    components: [{ type: 2, style: 2, label: 'Stop', custom_id: `spool:stop:${messageKey}` }],
  },
];

/** Approve and Deny, as one row of message components. */
const approvalComponents = ({ toolCallId }: ApprovalButtons) => [
  {
    type: 1,
    components: [
      { type: 2, style: 3, label: 'Approve', custom_id: `spool:approve:${toolCallId}` },
      { type: 2, style: 4, label: 'Deny', custom_id: `spool:deny:${toolCallId}` },
    ],
  },
];

/** Where Discord serves attachments. */
const DISCORD_CDN_ORIGINS = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

export const DISCORD_REFUSAL = "Sorry, you can't use Spool here.";
export const NOTHING_TO_STOP = 'Nothing to stop: that answer is finished.';

export const DISCORD_HELP = [
  '**Spool** answers with the help of its tools.',
  '• `/ask prompt:<text>`: ask; later `/ask` calls in this channel or thread continue the conversation.',
  '• `/usage`: what you spent here today, this week and this month (everything, for an admin), with a chart; only you see it.',
  '• `/recall query:<text>`: earlier tool runs and messages in this channel that match (only you see them).',
  '• `/result id:<tool_call_id>`: the whole result of a tool run /recall found, as a file only you see.',
  '• `/prompt server:<server> name:<prompt> arguments:<name=value …>`: ask with a prompt a tool server offers (a wrong name lists them).',
  '• `/new`: start a fresh conversation here; the old one stays searchable.',
].join('\n');

export function inviteUrl(applicationId: string): string {
  return `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot%20applications.commands&permissions=${INVITE_PERMISSIONS}`;
}

type CommandShape = { name: string; description: string; options?: unknown[] };

/** The parts of a command definition we set; Discord adds ids, versions and defaults. */
function comparable(commands: CommandShape[]): string {
  const option = (o: Record<string, unknown>) => ({
    name: o.name,
    description: o.description,
    type: o.type,
    required: o.required ?? false,
    max_length: o.max_length ?? null,
  });
  return JSON.stringify(
    commands
      .map((c) => ({
        name: c.name,
        description: c.description,
        options: (c.options ?? []).map((o) => option(o as Record<string, unknown>)),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  );
}

const isExpired = (error: unknown) =>
  error instanceof DiscordAPIError &&
  typeof error.code === 'number' &&
  EXPIRED_TOKEN_CODES.has(error.code);

/**
 * Discord refused a request for good: not a rate limit, not an expired token. A message with a
 * file refused so (too large, no Attach Files permission) can still go without it.
 */
const refusesFile = (error: unknown): error is DiscordAPIError =>
  error instanceof DiscordAPIError &&
  error.status >= 400 &&
  error.status < 500 &&
  error.status !== 429 &&
  !isExpired(error);

/** To someone whose message can never be stored (see `problemsOf`): what was wrong with it. */
export const unreadableReply = (problems: string[]) =>
  `I could not read that message: ${problems.join(', ')}.`;

/**
 * An INTERACTION_CREATE completed with what discord.js reads unconditionally when it builds the
 * interaction, where Discord left it out: `entitlements` and `authorizing_integration_owners`
 * (absent before 2023, as in Discord's own documented example), `application_id` (always this
 * app's), and the `channel` object where only `channel_id` came. Without them the person's
 * message would be lost to a TypeError inside discord.js.
 */
function completeInteraction(
  d: Record<string, unknown>,
  applicationId: string,
): Record<string, unknown> {
  return {
    ...d,
    application_id: d.application_id ?? applicationId,
    entitlements: d.entitlements ?? [],
    authorizing_integration_owners: d.authorizing_integration_owners ?? {},
    ...(d.channel == null && typeof d.channel_id === 'string'
      ? { channel: { id: d.channel_id } }
      : {}),
  };
}

/** A channel message's nonce: Discord takes at most 25 characters. */
const channelNonce = (inboxId: string, part: string) =>
  createHash('sha256').update(`${inboxId}:${part}`).digest('base64url').slice(0, 25);

/**
 * Spool through Discord slash commands. `/ask` and `/new` become inbound messages of the
 * channel's lane (the lane names the current conversation, which `/new` replaces); the deferral
 * is sent once the message is stored. Replies go over REST with the interaction token kept in
 * the inbox, so any replica can deliver them: edit the deferred response, then follow up.
 */
export class DiscordAdapter implements PlatformAdapter {
  readonly name = 'Discord';
  private readonly client: Client;
  /** The delivery engine, its commands answered in time or with plain words (see commands.ts). */
  private readonly delivery: Delivery;

  constructor(
    private readonly config: DiscordAdapterConfig,
    delivery: Delivery,
    private readonly logger: Logger,
  ) {
    this.delivery = answeringCommands(delivery);
    // Interactions need no intent; Guilds (not privileged) keeps channel and role data coherent.
    // discord.js bundles undici 6, whose requests take our undici 7 dispatcher (the types differ;
    // tested), files included once discordRequest has encoded them.
    const agent = config.dispatcher as unknown as RESTOptions['agent'] | undefined;
    const rest = {
      makeRequest: discordRequest,
      ...(config.apiUrl ? { api: config.apiUrl } : {}),
      ...(agent ? { agent } : {}),
    };
    this.client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest,
      allowedMentions: NO_MENTIONS,
    });
    this.guardGateway();
    this.client.on(Events.InteractionCreate, (interaction) => void this.handleSafely(interaction));
    this.client.on(Events.Error, (error) =>
      this.logger.error('Discord client error', { error: error.message }),
    );
    delivery.register('discord', this.outbound(), {
      workspaces: config.allowedGuilds,
      roles: config.allowedRoles,
    });
  }

  async start(): Promise<void> {
    this.client.rest.setToken(this.config.token);
    await this.registerCommands();
    const ready = new Promise<void>((resolve) =>
      this.client.once(Events.ClientReady, () => resolve()),
    );
    await this.client.login(this.config.token);
    await ready;
    this.logger.info(
      `Discord: connected as ${this.client.user?.tag}. Invite: ${inviteUrl(this.config.applicationId)}`,
    );
  }

  async stop(): Promise<void> {
    await this.client.destroy();
  }

  /** Whether the gateway is connected: interactions reach Spool now. */
  ready(): boolean {
    return this.client.isReady();
  }

  /**
   * discord.js handles each gateway event inside the socket's message handler, where nothing
   * catches it: an event it cannot handle becomes an unhandled rejection, which ends the process.
   * Every event passes through here instead (its one entry, `handlePacket`): an interaction is
   * completed first, so that a real person's message is answered, and an event that still throws
   * is logged and skipped while the connection carries on.
   */
  private guardGateway(): void {
    const ws = this.client.ws as unknown as {
      handlePacket(packet?: GatewayDispatchPayload, shard?: unknown): boolean;
    };
    const handle = ws.handlePacket.bind(ws);
    ws.handlePacket = (packet, shard) => {
      try {
        const completed =
          packet?.t === GatewayDispatchEvents.InteractionCreate
            ? {
                ...packet,
                d: completeInteraction(
                  packet.d as unknown as Record<string, unknown>,
                  this.config.applicationId,
                ),
              }
            : packet;
        return handle(completed as GatewayDispatchPayload | undefined, shard);
      } catch (error) {
        this.logger.error('Discord: a gateway event could not be handled', {
          event: packet?.t ?? 'none',
          error: errorMessage(error),
        });
        return true;
      }
    };
  }

  /** Sends the command definitions only when they differ from what Discord has. */
  private async registerCommands(): Promise<void> {
    const route = this.config.guildId
      ? Routes.applicationGuildCommands(this.config.applicationId, this.config.guildId)
      : Routes.applicationCommands(this.config.applicationId);
    const existing = (await this.client.rest.get(route)) as CommandShape[];
    if (comparable(existing) === comparable(DISCORD_COMMANDS)) {
      this.logger.info('Discord: slash commands are up to date');
      return;
    }
    await this.client.rest.put(route, { body: DISCORD_COMMANDS });
    this.logger.info(
      `Discord: registered slash commands ${this.config.guildId ? `in guild ${this.config.guildId}` : 'globally (may take up to an hour to appear)'}`,
    );
  }

  /** The channel (or thread) is the lane; its conversation is whichever `/new` made current. */
  private inbound(
    interaction: ChatInputCommandInteraction,
    kind: InboundKind,
    text: string,
  ): InboundMessage {
    const roles = interaction.member?.roles;
    return {
      lane: {
        platform: 'discord',
        workspace: interaction.guildId ?? 'dm',
        channel: interaction.channelId,
        thread: 'main',
      },
      messageKey: interaction.id,
      kind,
      user: interaction.user.id,
      roles: Array.isArray(roles) ? roles : roles ? [...roles.cache.keys()] : [],
      text,
      delivery: {
        interactionId: interaction.id,
        token: interaction.token,
        applicationId: interaction.applicationId,
      },
    };
  }

  /** Never throws: whatever fails, the user hears about it and other channels carry on. */
  private async handleSafely(interaction: Interaction): Promise<void> {
    const clicked = interaction.isButton()
      ? this.click(interaction)
      : interaction.isModalSubmit()
        ? this.submitForm(interaction)
        : undefined;
    if (clicked)
      return clicked.catch((error: unknown) =>
        this.logger.error('Discord: a click failed', { error: errorMessage(error) }),
      );
    if (!interaction.isChatInputCommand()) return;
    try {
      await this.handle(interaction);
    } catch (error) {
      this.logger.error('Discord: interaction failed', { error: errorMessage(error) });
      // Discord does not send an interaction again: the user must, and hears so plainly.
      const content = commandFailureReply(error);
      const answer =
        interaction.deferred || interaction.replied
          ? interaction.editReply({ content })
          : interaction.reply({ content, flags: MessageFlags.Ephemeral });
      await answer.catch((error: unknown) =>
        this.logger.warn('Discord: could not tell the user', { error: errorMessage(error) }),
      );
    }
  }

  private async handle(interaction: ChatInputCommandInteraction): Promise<void> {
    // Discord wants an answer within 3 seconds; the deferral says "thinking" until the reply.
    const acknowledge = async () => void (await interaction.deferReply());
    // A message that can never be stored is not acknowledged: its sender hears what was wrong with
    // it.
    const tellIfUnreadable = async (handled: Handled) => {
      if (handled.status === 'malformed')
        await interaction.reply({
          content: unreadableReply(handled.problems),
          flags: MessageFlags.Ephemeral,
        });
    };
    switch (interaction.commandName) {
      case 'ask': {
        const file = interaction.options.getAttachment('file');
        const files = file
          ? [
              {
                name: file.name,
                mimeType: file.contentType ?? undefined,
                sizeBytes: file.size,
                url: file.url,
              },
            ]
          : [];
        return tellIfUnreadable(
          await this.delivery.handleIncoming(
            {
              ...this.inbound(
                interaction,
                'message',
                interaction.options.getString('prompt', true),
              ),
              ...(files.length ? { files } : {}),
            },
            { acknowledge },
          ),
        );
      }
      case 'prompt': {
        const command = ['server', 'name', 'arguments']
          .map((option) => interaction.options.getString(option) ?? '')
          .join(' ');
        const asked = await this.delivery.promptText(this.askerOf(interaction), command);
        if ('problem' in asked)
          return void (await interaction.reply({
            content: splitMessage(asked.problem, DISCORD_MESSAGE_LIMIT)[0]!,
            flags: MessageFlags.Ephemeral,
          }));
        return tellIfUnreadable(
          await this.delivery.handleIncoming(this.inbound(interaction, 'message', asked.text), {
            acknowledge,
          }),
        );
      }
      case 'new':
        return tellIfUnreadable(
          await this.delivery.handleIncoming(
            this.inbound(interaction, 'new_conversation', '/new'),
            { acknowledge },
          ),
        );
      case 'recall':
        return this.recall(interaction);
      case 'result':
        return this.result(interaction);
      case 'usage':
        return this.usage(interaction);
      default:
        await interaction.reply({ content: DISCORD_HELP, flags: MessageFlags.Ephemeral });
    }
  }

  /**
   * A click on an approval prompt: a click that changes nothing is answered privately; the prompt
   * is edited by the turn that waits.
   */
  private async click(interaction: ButtonInteraction): Promise<void> {
    const [, stopped] = STOP_BUTTON.exec(interaction.customId) ?? [];
    if (stopped) return this.stopClicked(interaction, stopped);
    const [, action, questionId] = FORM_BUTTON.exec(interaction.customId) ?? [];
    if (questionId) return this.formButton(interaction, action as FormAnswer['action'], questionId);
    const [, decision, toolCallId] = APPROVAL_BUTTON.exec(interaction.customId) ?? [];
    if (!toolCallId) return;
    const outcome = await this.delivery.decideApproval({
      ...this.askerOf(interaction),
      toolCallId,
      approve: decision === 'approve',
    });
    const text = clickReply(outcome, 'discord');
    await (text
      ? interaction.reply({ content: text, flags: MessageFlags.Ephemeral })
      : interaction.deferUpdate());
  }

  /** Who clicked or asked, where: a prompt's lane is its channel's. */
  private askerOf(
    interaction: ButtonInteraction | ModalSubmitInteraction | ChatInputCommandInteraction,
  ): Asker {
    const roles = interaction.member?.roles;
    return {
      lane: {
        platform: 'discord',
        workspace: interaction.guildId ?? 'dm',
        channel: interaction.channelId ?? '',
        thread: 'main',
      },
      user: interaction.user.id,
      roles: Array.isArray(roles) ? roles : roles ? [...roles.cache.keys()] : [],
    };
  }

  /** Stop: the turn ends within half a second, wherever it runs; a late click is told so. */
  private async stopClicked(interaction: ButtonInteraction, messageKey: string): Promise<void> {
    const outcome = await this.delivery.stopTurn(this.askerOf(interaction), messageKey);
    await (outcome === 'stopping'
      ? interaction.deferUpdate()
      : interaction.reply({
          content: outcome === 'refused' ? DISCORD_REFUSAL : NOTHING_TO_STOP,
          flags: MessageFlags.Ephemeral,
        }));
  }

  /** Answer opens the form as a modal, for the person asked; Decline and Cancel answer at once. */
  private async formButton(
    interaction: ButtonInteraction,
    action: FormAnswer['action'],
    questionId: string,
  ): Promise<void> {
    const who = this.askerOf(interaction);
    if (action !== 'accept')
      return this.answered(
        interaction,
        await this.delivery.answerForm({ ...who, questionId, action }),
      );
    const form = await this.delivery.form(who, questionId);
    if ('status' in form) return this.answered(interaction, form);
    if (form.fields.length > MODAL_FIELDS)
      return void (await interaction.reply({
        content: tooManyFields(form),
        flags: MessageFlags.Ephemeral,
      }));
    await interaction.showModal(formModal(questionId, form));
  }

  private async submitForm(interaction: ModalSubmitInteraction): Promise<void> {
    const [, questionId] = FORM_MODAL.exec(interaction.customId) ?? [];
    if (!questionId) return;
    const values = modalValues(interaction.fields.fields);
    const outcome = await this.delivery.answerForm({
      ...this.askerOf(interaction),
      questionId,
      action: 'accept',
      values,
    });
    await this.answered(interaction, outcome);
  }

  /** A click that was not taken as the answer is told why, privately; the prompt is edited by the turn. */
  private async answered(
    interaction: ButtonInteraction | ModalSubmitInteraction,
    outcome: FormClickOutcome,
  ): Promise<void> {
    const text = formClickReply(outcome, 'discord');
    await (text
      ? interaction.reply({ content: text, flags: MessageFlags.Ephemeral })
      : interaction.deferUpdate());
  }

  private async result(interaction: ChatInputCommandInteraction): Promise<void> {
    const id = interaction.options.getString('id', true);
    const found = await this.inTime(
      interaction,
      this.delivery.result(this.inbound(interaction, 'message', id), id),
    );
    if (found === 'refused') return this.replyPrivately(interaction, { content: DISCORD_REFUSAL });
    const part = resultAsFile(id, found);
    if (!part.file) return this.replyPrivately(interaction, { content: part.text });
    try {
      await this.replyPrivately(interaction, {
        content: part.text,
        files: [{ attachment: Buffer.from(part.file.content), name: part.file.name }],
      });
    } catch (error) {
      if (!refusesFile(error)) throw error;
      // Refused, the interaction is still unanswered: the result goes as private messages, 10 at
      // most (the first says why, and how much is left out; the whole result stays stored).
      const render = (text: string) => splitMessage(text, DISCORD_MESSAGE_LIMIT);
      const [first, ...rest] = resultAsMessages(
        { ...part, file: part.file },
        error.message,
        render,
        9,
      );
      await this.replyPrivately(interaction, { content: first! });
      for (const content of rest)
        await interaction.followUp({ content, flags: MessageFlags.Ephemeral });
    }
  }

  /**
   * `work`, with the interaction deferred (privately) if it takes long enough that Discord's 3 s to
   * answer would otherwise pass.
   */
  private inTime<T>(interaction: ChatInputCommandInteraction, work: Promise<T>): Promise<T> {
    return sayingSlow(work, DEFER_AFTER_MS, () =>
      interaction.deferReply({ flags: MessageFlags.Ephemeral }),
    );
  }

  /** A private answer: the reply, or the deferred response's edit once `inTime` deferred. */
  private async replyPrivately(
    interaction: ChatInputCommandInteraction,
    message: { content: string; files?: Array<{ attachment: Buffer; name: string }> },
  ): Promise<void> {
    await (interaction.deferred
      ? interaction.editReply(message)
      : interaction.reply({ ...message, flags: MessageFlags.Ephemeral }));
  }

  /** `/usage`, only to the person: the text and the last 30 days as a chart. */
  private async usage(interaction: ChatInputCommandInteraction): Promise<void> {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const report = await this.delivery.usage(this.inbound(interaction, 'message', '/usage'), {
      channel: (id) => `<#${id}>`,
      person: (id) => `<@${id}>`,
    });
    if (report === 'refused')
      return void (await interaction.editReply({ content: DISCORD_REFUSAL }));
    const [first, ...rest] = splitMessage(report.text, DISCORD_MESSAGE_LIMIT);
    await interaction.editReply({
      content: first!,
      allowedMentions: NO_MENTIONS,
      files: [{ attachment: usageChartPng(report.days, report.currency), name: 'usage.png' }],
    });
    for (const content of rest)
      await interaction.followUp({
        content,
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
  }

  private async recall(interaction: ChatInputCommandInteraction): Promise<void> {
    const query = interaction.options.getString('query', true);
    const hits = await this.inTime(
      interaction,
      this.delivery.recall(this.inbound(interaction, 'message', query), query),
    );
    if (!hits) return this.replyPrivately(interaction, { content: DISCORD_REFUSAL });
    if (!interaction.deferred) await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    // Private results: never the public channel fallback, even if the token expired.
    const [first, ...rest] = splitMessage(formatHits(query, hits), DISCORD_MESSAGE_LIMIT);
    await interaction.editReply({ content: first!, allowedMentions: NO_MENTIONS });
    for (const content of rest)
      await interaction.followUp({
        content,
        flags: MessageFlags.Ephemeral,
        allowedMentions: NO_MENTIONS,
      });
  }

  private outbound(): Outbound {
    const rest = this.client.rest;
    return {
      render: (reply) => splitMessage(reply, DISCORD_MESSAGE_LIMIT),
      postsFiles: true,
      post: async (message, chunk) => {
        try {
          return await this.postChunk(message, chunk);
        } catch (error) {
          // The file is what Discord will not take: the delivery engine posts the reply as messages
          // instead.
          if (chunk.file && refusesFile(error)) throw new FileRefusedError(error.message);
          throw error;
        }
      },
      // The text alone: the buttons go.
      edit: async ({ delivery }, messageId, chunk) => {
        const body = { content: chunk.text, components: [], allowed_mentions: NO_MENTIONS };
        await rest.patch(
          Routes.webhookMessage(delivery.applicationId!, delivery.token!, messageId),
          { body, auth: false },
        );
      },
      refuse: async ({ delivery }) => {
        const body = { type: 4, data: { content: DISCORD_REFUSAL, flags: MessageFlags.Ephemeral } };
        await rest.post(Routes.interactionCallback(delivery.interactionId!, delivery.token!), {
          body,
          auth: false,
        });
      },
      // The deferral already shows "Spool is thinking…" until the reply replaces it.
      showWorking: async () => async () => {},
      // The deferred response ("thinking…") says what Spool is doing, with Stop, until the reply
      // replaces it.
      showStatus: async ({ delivery, messageKey }, status) => {
        await this.client.rest.patch(
          Routes.webhookMessage(delivery.applicationId!, delivery.token!, '@original'),
          {
            body: { content: workingLine(status), components: stopComponents(messageKey) },
            auth: false,
          },
        );
      },
      // Attachment URLs are signed by Discord: nothing of the bot's goes with them, and only
      // Discord's CDN is asked.
      fetchFile: async (_message, file, maxBytes, signal) => {
        const origins = [
          ...DISCORD_CDN_ORIGINS,
          ...(this.config.apiUrl ? [new URL(this.config.apiUrl).origin] : []),
        ];
        if (!file.url || !servedFrom(file.url, origins))
          throw new Error("it is not on Discord's CDN");
        return fetchFileBytes(file.url, { maxBytes, signal, dispatcher: this.config.dispatcher });
      },
    };
  }

  /** One chunk, by the interaction's token: the deferred response first, then follow-ups. */
  private async postChunk(message: InboundMessage, chunk: OutgoingChunk): Promise<string> {
    const rest = this.client.rest;
    const { applicationId, token } = message.delivery;
    // A file replaces the message's attachments: editing the original again never adds a second.
    const { files, attachments } = attached(chunk.file);
    const body = {
      content: chunk.text,
      allowed_mentions: NO_MENTIONS,
      ...attachments,
      ...(chunk.approval ? { components: approvalComponents(chunk.approval) } : {}),
      ...(chunk.form ? { components: formComponents(chunk.form) } : {}),
    };
    try {
      // The first follow-up of a deferred response takes the response's place: the prompt
      // must be a message of its own, edited once decided, so the response says it waits.
      // Stop stays while a question holds the turn; a parked approval has no turn running.
      if (chunk.approval || chunk.form)
        await rest.patch(Routes.webhookMessage(applicationId!, token!, '@original'), {
          body: chunk.approval
            ? { content: WAITING_FOR_APPROVAL, components: [] }
            : { content: WAITING_FOR_ANSWER, components: stopComponents(message.messageKey) },
          auth: false,
        });
      const sent =
        chunk.seq === 0
          ? await rest.patch(Routes.webhookMessage(applicationId!, token!, '@original'), {
              // The reply takes the working line's place, and its Stop button goes with it.
              body: { components: [], ...body },
              files,
              auth: false,
            })
          : await rest.post(Routes.webhook(applicationId!, token!), { body, files, auth: false });
      return (sent as { id: string }).id;
    } catch (error) {
      // Only /ask outlives its token publicly; anything else would leak or make no sense in the
      // channel.
      if (!isExpired(error) || message.kind !== 'message') throw error;
      return this.postToChannel(message, chunk);
    }
  }

  /**
   * An /ask answer that outlived its interaction token (15 minutes) goes to the channel instead.
   */
  private async postToChannel(message: InboundMessage, chunk: OutgoingChunk): Promise<string> {
    this.logger.warn(
      'Discord: interaction expired before the reply was ready; posting it to the channel',
      { interaction: message.messageKey },
    );
    // The same nonce for the same chunk on every attempt: with enforce_nonce, Discord answers a
    // repeat (a crash between posting and recording it) with the message it already created.
    const post = (content: string, part: string, file?: ReplyFile) => {
      const { files, attachments } = attached(file);
      const nonce = chunk.inboxId
        ? { nonce: channelNonce(chunk.inboxId, part), enforce_nonce: true }
        : {};
      return this.client.rest.post(Routes.channelMessages(message.lane.channel), {
        body: {
          content,
          allowed_mentions: { parse: [], users: [message.user] },
          ...nonce,
          ...attachments,
        },
        files,
      }) as Promise<{ id: string }>;
    };
    if (chunk.seq === 0)
      await post(
        `<@${message.user}>, your \`/ask\` took longer than Discord waits for a reply, so here it is:`,
        'intro',
      );
    return (await post(chunk.text, String(chunk.seq), chunk.file)).id;
  }
}
