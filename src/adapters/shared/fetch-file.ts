import type { Dispatcher } from 'undici';
import { FileTooLargeError } from '../../core/ports/platform/delivery.ts';
import { fetchThrough } from '../../proxy.ts';

export interface FileFetch {
  /** Sent only to `url`: redirects are refused, so no credential follows one to another host. */
  headers?: Record<string, string>;
  maxBytes: number;
  signal: AbortSignal;
  dispatcher?: Dispatcher;
}

/**
 * A file's bytes, streamed and cut off with FileTooLargeError past `maxBytes`, whatever the server
 * declared.
 */
export async function fetchFileBytes(
  url: string,
  { headers, maxBytes, signal, dispatcher }: FileFetch,
): Promise<Uint8Array> {
  // Node's own fetch unless a proxy is set: undici is loaded only then (see src/proxy.ts).
  const response = await fetchThrough(dispatcher)(url, { headers, signal, redirect: 'error' });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes)
    throw new FileTooLargeError(`over ${maxBytes} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) throw new FileTooLargeError(`over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Whether `url` is served from one of `origins` (scheme, host and port), so that a credential may
 * be sent there.
 */
export function servedFrom(url: string, origins: readonly string[]): boolean {
  try {
    return origins.includes(new URL(url).origin);
  } catch {
    return false;
  }
}
