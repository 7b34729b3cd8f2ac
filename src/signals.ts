/**
 * A signal of its own that follows `source`, for an SDK that adds an abort listener to the signal
 * it is given and never removes it (the MCP SDK, openai's). Not `AbortSignal.any([source])`: Node
 * may keep a combined signal that has an abort listener alive while its sources live, and with it
 * what the listener holds (the memory bench's heap snapshots found every MCP result held so, by
 * the SDK's listener on CallClock's combined signal). `release`, once the request is over, unhooks
 * it from `source`, and nothing keeps it.
 */
export function followingSignal(source: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (source.aborted) {
    controller.abort(source.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const follow = () => controller.abort(source.reason);
  source.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    release: () => source.removeEventListener('abort', follow),
  };
}
