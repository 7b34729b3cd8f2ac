import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { nextId } from './fake-discord.ts';

/** Real INTERACTION_CREATE payloads (test/fixtures/discord-payloads/README.md), as Discord posts them. */
export type Payload = Record<string, unknown> & {
  id: string;
  token: string;
  channel_id: string;
  guild_id?: string;
};
const DIR = new URL('../fixtures/discord-payloads/', import.meta.url);
export const fixtures = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    ...(JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) as {
      /** Where it is from. */
      source: string;
      /** `answered`: an /ask, answered once. `noted`: taken without harm, and without a reply. */
      expect: 'answered' | 'noted';
      /** What the sender wrote, for the model to receive. */
      words: string[];
      payload: Payload;
    }),
  }));
export const fixture = (prefix: string) => fixtures.find((f) => f.file.startsWith(prefix))!.payload;

/** A fixture's /ask again, as a new interaction with words of its own. */
export function ask(prompt: string): Payload {
  const payload = structuredClone(fixture('04'));
  const id = nextId();
  const data = payload.data as { options: Array<{ name: string; type: number; value: string }> };
  data.options = [{ name: 'prompt', type: 3, value: prompt }];
  return { ...payload, id, token: `http-token-${id}` };
}

export interface PostedInteraction {
  status: number;
  json?: { type: number; data?: { flags?: number; custom_id?: string } };
  ms: number;
}

/**
 * Discord's side of HTTP interactions: its key pair (Spool is given the public half, as 64 hex
 * digits) and a POST as Discord makes it, `body` signed with `key` at `timestamp` (now, by
 * default), timed to its response.
 */
export function discordSigner() {
  const keys = generateKeyPairSync('ed25519');
  const publicKeyHex = keys.publicKey
    .export({ format: 'der', type: 'spki' })
    .subarray(12)
    .toString('hex');
  async function post(
    url: string,
    body: string,
    options: { key?: KeyObject; timestamp?: string; signature?: string } = {},
  ): Promise<PostedInteraction> {
    const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
    const signature =
      options.signature ??
      sign(null, Buffer.from(timestamp + body), options.key ?? keys.privateKey).toString('hex');
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature-ed25519': signature,
        'x-signature-timestamp': timestamp,
      },
      body,
    });
    const ms = performance.now() - started;
    const text = await response.text();
    const json =
      response.headers.get('content-type') === 'application/json' ? JSON.parse(text) : undefined;
    return { status: response.status, json, ms };
  }
  return { publicKeyHex, post };
}
