import { ErrorCode, type WebAPIPlatformError, type WebClient } from '@slack/web-api';
import {
  FileRefusedError,
  type InboundFile,
  type ReplyFile,
} from '../../core/ports/platform/delivery.ts';
import { errorMessage } from '../../core/errors.ts';
import { fetchFileBytes, servedFrom } from '../shared/fetch-file.ts';
import type { SlackAdapterConfig } from './parts.ts';

/** Slack's file host: the only place the bot token goes with a file download. */
const SLACK_FILES_ORIGIN = 'https://files.slack.com';

/** A refusal from Slack itself (`ok: false`), as opposed to a network failure or a rate limit. */
const refusedBySlack = (error: unknown): error is WebAPIPlatformError =>
  (error as { code?: unknown }).code === ErrorCode.PlatformError;

/** A file with its message, in a thread or a DM; returns the file's id. */
export async function uploadFile(
  client: WebClient,
  where: { channel: string; thread?: string },
  text: string,
  file: ReplyFile,
): Promise<string> {
  const upload = {
    initial_comment: text,
    filename: file.name,
    title: file.name,
    content: file.content,
    ...(file.language ? { snippet_type: file.language } : {}),
  };
  const sent = await client.files
    .uploadV2(
      where.thread
        ? { ...upload, channel_id: where.channel, thread_ts: where.thread }
        : { ...upload, channel_id: where.channel },
    )
    .catch((error: unknown) => {
      // Slack's no (a missing files:write scope, uploads turned off) holds on every retry.
      throw refusedBySlack(error) ? new FileRefusedError(`Slack said ${error.data.error}`) : error;
    });
  const [completed] = (sent as { files?: Array<{ files?: Array<{ id?: string }> }> }).files ?? [];
  return completed?.files?.[0]?.id ?? file.name;
}

/** A reply file's id is what it was posted as: deleting it takes it from the thread. */
export async function deleteFile(client: WebClient, fileId: string): Promise<void> {
  await client.files.delete({ file: fileId }).catch((error: unknown) => {
    if ((error as WebAPIPlatformError).data?.error !== 'file_not_found') throw error;
  });
}

/**
 * Where a file Slack listed without a URL (Slack Connect's `check_file_info`) is served, from
 * files.info.
 */
async function fileUrl(client: WebClient, file: InboundFile): Promise<string> {
  if (!file.id) throw new Error('Slack listed it with neither a URL nor an id');
  const info = await client.files.info({ file: file.id }).catch((error: unknown) => {
    throw new Error(
      `Slack did not say where it is (files.info: ${refusedBySlack(error) ? error.data.error : errorMessage(error)})`,
    );
  });
  const url = info.file?.url_private_download ?? info.file?.url_private;
  if (!url) throw new Error('Slack did not say where it is (files.info gave no URL)');
  return url;
}

/** The bytes of a file someone shared, downloaded with the bot token from Slack's file host. */
export async function fetchSlackFile(
  client: WebClient,
  config: SlackAdapterConfig,
  file: InboundFile,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const url = file.url ?? (await fileUrl(client, file));
  // The bot token goes only to Slack's file host (or the Web API's own host, where one is set).
  const origins = [SLACK_FILES_ORIGIN, ...(config.apiUrl ? [new URL(config.apiUrl).origin] : [])];
  if (!servedFrom(url, origins))
    throw new Error(`it is not on Slack's file host (${SLACK_FILES_ORIGIN})`);
  return fetchFileBytes(url, {
    headers: { authorization: `Bearer ${client.token ?? ''}` },
    maxBytes,
    signal,
    dispatcher: config.dispatcher,
  });
}
