import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';

/** Bytes kept from each end of a skipped message: enough to find its JSON-RPC id. */
const EDGE_BYTES = 256;
// The SDK writes `{"result":…,"jsonrpc":"2.0","id":7}`; other SDKs put the id first.
const ID_AT_END = /"id"\s*:\s*(\d+|"[^"\\]*")\s*\}\s*$/;
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+|"[^"\\]*")/;

/**
 * Thrown out of `readMessage` for a skipped message whose id could not be found: the SDK logs it.
 */
export class OversizedMessageError extends Error {}

type Line = Buffer | { skippedBytes: number; head: Buffer; tail: Buffer };

/**
 * The stdio transport's line buffer, in place of the SDK's. The SDK's closes the connection when
 * one message passes its limit (10 MiB), losing the result and every call in flight, and it copies
 * the whole buffer on every chunk, which is quadratic in a message's size. Here chunks are joined
 * once per line, and a message over the limit is skipped to its newline and answered with a
 * JSON-RPC error for its id: that call fails with a clear error and the server stays connected.
 */
export class MessageLineBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private skipping?: { skippedBytes: number; head: Buffer; tail: Buffer };
  private readonly lines: Line[] = [];

  constructor(readonly maxMessageBytes: number) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    for (let newline = rest.indexOf(0x0a); newline !== -1; newline = rest.indexOf(0x0a)) {
      this.take(rest.subarray(0, newline));
      this.lines.push(this.skipping ?? Buffer.concat(this.chunks, this.size));
      this.chunks = [];
      this.size = 0;
      this.skipping = undefined;
      rest = rest.subarray(newline + 1);
    }
    this.take(rest);
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.skipping.skippedBytes += part.length;
      this.skipping.tail = Buffer.concat([this.skipping.tail, part]).subarray(-EDGE_BYTES);
      return;
    }
    this.chunks.push(part);
    this.size += part.length;
    if (this.size <= this.maxMessageBytes) return;
    const whole = Buffer.concat(this.chunks, this.size);
    this.skipping = {
      skippedBytes: whole.length,
      head: whole.subarray(0, EDGE_BYTES),
      tail: Buffer.from(whole.subarray(-EDGE_BYTES)),
    };
    this.chunks = [];
    this.size = 0;
  }

  readMessage(): JSONRPCMessage | null {
    const line = this.lines.shift();
    if (line === undefined) return null;
    if (Buffer.isBuffer(line)) return deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
    const id =
      ID_AT_END.exec(line.tail.toString('latin1'))?.[1] ??
      ID_AT_START.exec(line.head.toString('latin1'))?.[1];
    const message = `The server's reply was ${line.skippedBytes} bytes, over the MCP message limit of ${this.maxMessageBytes} bytes, so it was not read.`;
    if (id === undefined)
      throw new OversizedMessageError(
        `${message} Its request id could not be found; the call will time out.`,
      );
    return {
      jsonrpc: '2.0',
      id: JSON.parse(id) as string | number,
      error: { code: -32000, message },
    };
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
    this.lines.length = 0;
  }
}
