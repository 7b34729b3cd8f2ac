import { describe, expect, it } from 'vitest';
import { MessageLineBuffer, OversizedMessageError } from './line-buffer.ts';

const line = (message: object) => Buffer.from(`${JSON.stringify(message)}\n`);
const drain = (buffer: MessageLineBuffer) => {
  const out = [];
  for (let m = buffer.readMessage(); m; m = buffer.readMessage()) out.push(m);
  return out;
};

describe('MessageLineBuffer', () => {
  it('reads messages split across chunks and several in one chunk', () => {
    const buffer = new MessageLineBuffer(1_000);
    const bytes = Buffer.concat([
      line({ jsonrpc: '2.0', id: 1, result: { a: 'é' } }),
      line({ jsonrpc: '2.0', method: 'ping' }),
    ]);
    for (let i = 0; i < bytes.length; i += 7) buffer.append(bytes.subarray(i, i + 7));
    expect(drain(buffer)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { a: 'é' } },
      { jsonrpc: '2.0', method: 'ping' },
    ]);
  });

  it('answers a message over the limit with an error for its id, wherever the id is, and reads the next one', () => {
    const buffer = new MessageLineBuffer(100);
    const big = 'x'.repeat(500);
    // As the TypeScript SDK writes a response (id last), and as others do (id first).
    const idLast = `{"result":{"content":[{"type":"text","text":"${big}"}]},"jsonrpc":"2.0","id":7}`;
    buffer.append(Buffer.from(`${idLast}\n{"jsonrpc":"2.0","id":"abc","result":{"t":"${big}"}}\n`));
    buffer.append(line({ jsonrpc: '2.0', id: 9, result: {} }));
    const [first, second, third] = drain(buffer) as Array<{
      id: unknown;
      error?: { message: string };
    }>;
    expect(first).toMatchObject({ id: 7, error: { code: -32000 } });
    expect(first!.error!.message).toBe(
      `The server's reply was ${idLast.length} bytes, over the MCP message limit of 100 bytes, so it was not read.`,
    );
    expect(second).toMatchObject({ id: 'abc', error: { code: -32000 } });
    expect(third).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });

  it('says so when a skipped message has no id it can find', () => {
    const buffer = new MessageLineBuffer(50);
    buffer.append(
      Buffer.from(
        `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'y'.repeat(100)}"}}\n`,
      ),
    );
    expect(() => buffer.readMessage()).toThrow(OversizedMessageError);
    buffer.append(line({ jsonrpc: '2.0', id: 1, result: {} }));
    expect(buffer.readMessage()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
