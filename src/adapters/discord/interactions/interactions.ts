import { MessageFlags, type ButtonInteraction, type ModalSubmitInteraction } from 'discord.js';
import { answerClick, clickOf, type SpoolClick } from '../../../core/delivery/waiting/clicks.ts';
import { feedbackReply } from '../../../core/delivery/posts/feedback.ts';
import { formClickReply } from '../../../core/delivery/waiting/forms.ts';
import { errorMessage } from '../../../core/errors.ts';
import { reasonModal, reasonOf, REASON_MODAL } from './feedback-modal.ts';
import { FORM_MODAL, formModal, MODAL_FIELDS, modalValues, tooManyFields } from './form-modal.ts';
import type { Asker } from '../../../core/ports/platform/platform.ts';
import { askerOf } from '../inbound/inbound.ts';
import type { DiscordParts } from '../parts.ts';
import { DISCORD_REFUSAL } from '../text.ts';

type Component = ButtonInteraction | ModalSubmitInteraction;

/**
 * A click on one of Spool's buttons (Approve and Deny, a question's Answer, Decline and Cancel,
 * Stop) or a question's submitted modal. Never throws: a failure is logged.
 */
export async function answerComponent(parts: DiscordParts, interaction: Component): Promise<void> {
  const answered = interaction.isButton()
    ? clicked(parts, interaction)
    : submitted(parts, interaction);
  await answered.catch((error: unknown) =>
    parts.logger.error('Discord: a click failed', { error: errorMessage(error) }),
  );
}

/** Answer opens the question's form as a modal; every other click goes to the delivery engine. */
async function clicked(parts: DiscordParts, interaction: ButtonInteraction): Promise<void> {
  const click = clickOf(interaction.customId);
  if (!click) return;
  if (click.kind === 'form' && click.action === 'accept')
    return showForm(parts, interaction, click.questionId);
  if (click.kind === 'feedback' && click.rating === 'down')
    return thumbsDown(parts, interaction, click.inboxId);
  await answer(parts, interaction, click);
}

/** A 👎, stored at once; then a modal asks why (closing it keeps the 👎 without a reason). */
async function thumbsDown(
  { delivery }: DiscordParts,
  interaction: ButtonInteraction,
  inboxId: string,
): Promise<void> {
  const click = { ...askerOf(interaction), inboxId, rating: 'down' as const };
  const outcome = await delivery.rateAnswer(click);
  if (outcome !== 'recorded') return respond(interaction, feedbackReply(outcome, click));
  await interaction.showModal(reasonModal(inboxId));
}

/** A modal submitted: a question's answer, or a 👎's reason, for the delivery engine to record. */
async function submitted(parts: DiscordParts, interaction: ModalSubmitInteraction): Promise<void> {
  const [, inboxId] = REASON_MODAL.exec(interaction.customId) ?? [];
  if (inboxId) {
    const reason = reasonOf(interaction.fields);
    const click = { ...askerOf(interaction), inboxId, rating: 'down' as const, reason };
    return respond(interaction, feedbackReply(await parts.delivery.rateAnswer(click), click));
  }
  const [, questionId] = FORM_MODAL.exec(interaction.customId) ?? [];
  if (!questionId) return;
  const values = modalValues(interaction.fields.fields);
  await answer(parts, interaction, { kind: 'form', questionId, action: 'accept', values });
}

/**
 * A click that changed nothing (or was refused) is told why, privately; otherwise the click is
 * only acknowledged: the turn that waits edits the prompt, and Stop ends the working line's turn.
 */
async function answer(
  { delivery }: DiscordParts,
  interaction: Component,
  click: SpoolClick,
): Promise<void> {
  const words = { platform: 'discord', refusal: DISCORD_REFUSAL };
  const who = click.kind === 'stop' ? await stopperOf(interaction) : askerOf(interaction);
  await respond(interaction, await answerClick(delivery, who, click, words));
}

/**
 * Who clicks Stop, in the lane of the turn it stops: an `/ask`'s, on its deferred response, is the
 * channel's (or thread's) own; a scheduled run's, on the status message Spool posted in the run's
 * thread (run-status.ts; no interaction made it), is the parent channel's lane, with that thread.
 * The thread is read over REST where discord.js has not cached it.
 */
async function stopperOf(interaction: Component): Promise<Asker> {
  const asker = askerOf(interaction);
  const { message, channelId, client } = interaction;
  // An interaction's response is marked twice: its metadata, and the application's webhook.
  if (!message || message.interactionMetadata || message.webhookId || !channelId) return asker;
  // Its guild need not be cached either (an interaction over HTTP has none).
  const channel =
    interaction.channel ??
    (await client.channels.fetch(channelId, { allowUnknownGuild: true }).catch(() => null));
  if (!channel?.isThread() || !channel.parentId) return asker;
  return { ...asker, lane: { ...asker.lane, channel: channel.parentId, thread: channel.id } };
}

/** `text` only to the person who clicked; without it, the click is acknowledged. */
async function respond(interaction: Component, text: string | undefined): Promise<void> {
  await (text
    ? interaction.reply({ content: text, flags: MessageFlags.Ephemeral })
    : interaction.deferUpdate());
}

/**
 * The form as a modal, for the person asked; a form a modal cannot hold is told so. A page to open
 * has nothing to fill in: Done is the answer.
 */
async function showForm(
  parts: DiscordParts,
  interaction: ButtonInteraction,
  questionId: string,
): Promise<void> {
  const form = await parts.delivery.form(askerOf(interaction), questionId);
  if ('status' in form) return respond(interaction, formClickReply(form, 'discord'));
  if (form.url) return answer(parts, interaction, { kind: 'form', questionId, action: 'accept' });
  if (form.fields.length > MODAL_FIELDS)
    return void (await interaction.reply({
      content: tooManyFields(form),
      flags: MessageFlags.Ephemeral,
    }));
  await interaction.showModal(formModal(questionId, form));
}
