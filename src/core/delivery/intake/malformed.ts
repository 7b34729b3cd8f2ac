import type { InboundMessage } from '../../ports/platform/delivery.ts';

const isText = (value: unknown): value is string => typeof value === 'string';
const isKey = (value: unknown) => isText(value) && value.length > 0;

/**
 * What makes a message unstorable, as short phrases naming each bad field; none for a good one.
 * A platform can send anything (a hand-made request, an event of a shape it changed): such a
 * message is bad input, to be dropped and named, not an outage for the platform to retry.
 */
export function problemsOf(message: InboundMessage): string[] {
  const { lane, delivery, files } = message as Partial<Record<keyof InboundMessage, unknown>> &
    InboundMessage;
  const problems: string[] = [];
  for (const field of ['platform', 'workspace', 'channel', 'thread'] as const) {
    if (!isKey(lane?.[field])) problems.push(`no ${field}`);
  }
  if (!isKey(message.messageKey)) problems.push('no message id');
  if (!isKey(message.user)) problems.push('no user');
  if (!isText(message.text)) problems.push(`text is ${typeof message.text}, not text`);
  const deliveryValues =
    typeof delivery === 'object' && delivery !== null ? Object.values(delivery) : [undefined];
  if (!deliveryValues.every(isText)) problems.push('delivery details are not text');
  if (
    files !== undefined &&
    !(
      Array.isArray(files) &&
      files.every((f) => isText(f?.name) && typeof f?.sizeBytes === 'number')
    )
  ) {
    problems.push('a file has no name or size');
  }
  return problems;
}
