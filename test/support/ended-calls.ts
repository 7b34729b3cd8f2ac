import { isParked, type ToolOutcome, type ToolPort } from '../../src/core/ports/tools.ts';
import { ToolRegistry, type ToolSource } from '../../src/tools/registry.ts';

/**
 * A registry over `sources` for tests of calls that end at once: a call that parks (a task, a
 * sign-in) fails the test instead of passing as an outcome.
 */
export function endingRegistry(sources: ToolSource[]) {
  const registry = new ToolRegistry(sources);
  return {
    list: () => registry.list(),
    async call(...args: Parameters<ToolPort['call']>): Promise<ToolOutcome> {
      const outcome = await registry.call(...args);
      if (isParked(outcome)) throw new Error(`${args[0]} parked (${outcome.parked})`);
      return outcome;
    },
  };
}
