import type { IncomingMessage, ServerResponse } from 'node:http';

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString('utf8');
}

/** A request's body as sent: multipart files may be binary. */
export async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Answers a request once `work` has; a request whose client went away mid-body (the soak
 * SIGKILLs the bot while it uploads) is dropped, as a real server drops it. Any other failure
 * still surfaces as an unhandled rejection, which fails the run.
 */
export function answerWhenDone<T>(
  req: IncomingMessage,
  res: ServerResponse,
  work: Promise<T>,
  answer: (value: T) => void,
): void {
  work.then(answer, (error: unknown) => {
    if (!req.complete) return void res.destroy();
    throw error;
  });
}
