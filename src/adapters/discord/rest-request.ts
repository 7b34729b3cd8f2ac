import { DefaultRestOptions, type RESTOptions } from 'discord.js';

type MakeRequest = RESTOptions['makeRequest'];

/**
 * discord.js's own request, with a multipart body (a file: a reply file, the `/usage` chart,
 * `/result`) encoded to bytes first by Node's own Response. discord.js hands its FormData to its
 * bundled undici 6, which on Node 20 cannot stream one through an undici 7 dispatcher ("action is
 * not a function"): Spool's proxy agent, or undici 7 installed process-wide by anything loaded
 * before discord.js. Bytes go through any dispatcher.
 */
export const discordRequest: MakeRequest = async (url, init) => {
  const body: unknown = init.body;
  if (!(body instanceof FormData)) return DefaultRestOptions.makeRequest(url, init);
  const encoded = new Response(body);
  const bytes = new Uint8Array(await encoded.arrayBuffer());
  const headers = {
    ...(init.headers as Record<string, string> | undefined),
    'Content-Type': encoded.headers.get('content-type')!,
  };
  return DefaultRestOptions.makeRequest(url, { ...init, body: bytes, headers });
};
