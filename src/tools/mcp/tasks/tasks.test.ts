import type { Client, GetTaskResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { followTask } from './tasks.ts';

/**
 * A task that is `working` until its `endsOnLook`th look, on a clock that moves `pollMs` a look
 * (its server suggests polling every `pollMs`); `follow` follows it for `followMs`.
 */
function taskServer(endsOnLook: number, pollMs: number) {
  let looks = 0;
  const task = (status: GetTaskResult['status']): GetTaskResult =>
    ({
      taskId: 't1',
      status,
      pollInterval: pollMs,
      createdAt: new Date(0).toISOString(),
      lastUpdatedAt: new Date(0).toISOString(),
      ttl: null,
    }) as GetTaskResult;
  const client = {
    request: async () => task(++looks >= endsOnLook ? 'completed' : 'working'),
  } as unknown as Client;
  const follow = (followMs: number) =>
    followTask(
      client,
      task('working'),
      { signal: new AbortController().signal, followMs },
      () => {},
      () => looks * pollMs,
    );
  return { follow, looks: () => looks };
}

describe('followTask', () => {
  it('takes its last look at the end of the time it follows, not a poll before it', async () => {
    // Looks at 250 and 500 find it working; one more poll would end past 600, so the last look is
    // at 600 (the clock here says 750), and finds it ended.
    const server = taskServer(3, 250);
    const look = await server.follow(600);
    expect(look).toMatchObject({ ended: 'completed' });
    expect(server.looks()).toBe(3);
  });

  it('parks once the time it follows is over, the task still working', async () => {
    const server = taskServer(10, 250);
    const look = await server.follow(600);
    expect(look).toHaveProperty('parked');
    expect(server.looks()).toBe(3);
  });

  it('parks at once when it follows for no time (a task taken up again)', async () => {
    const server = taskServer(1, 250);
    const look = await server.follow(0);
    expect(look).toHaveProperty('parked');
    expect(server.looks()).toBe(0);
  });
});
