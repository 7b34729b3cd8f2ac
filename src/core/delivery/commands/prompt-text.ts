import type { Asker } from '../../ports/platform/platform.ts';
import type { PromptPort } from '../../ports/prompts.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { policyFor, serverAllowed, type Policy } from '../rules/policy.ts';
import { parsePromptCommand, promptList, promptProblem } from './prompts.ts';

export interface PromptTextDeps {
  prompts?: PromptPort;
  logger: Logger;
  policy: Policy | undefined;
}

/**
 * The text of the prompt `command` names (a server, a prompt, its arguments), from the servers the
 * channel's tools reach; else what is wrong with the command, with the prompts there are.
 */
export async function promptText(
  deps: PromptTextDeps,
  who: Asker,
  command: string,
): Promise<{ text: string } | { problem: string }> {
  // Only the servers the channel's tools reach: another's prompts are neither listed nor fetched.
  const { tools } = policyFor(deps.policy, who.lane);
  const prompts = (deps.prompts?.list() ?? []).filter((p) => serverAllowed(tools, p.server));
  if (!command.trim()) return { problem: promptList(prompts) };
  const parsed = parsePromptCommand(command);
  if ('problem' in parsed) return { problem: `${parsed.problem}\n${promptList(prompts)}` };
  const problem = promptProblem(parsed, prompts);
  if (problem) return { problem };
  try {
    return { text: await deps.prompts!.render(parsed.server, parsed.name, parsed.args) };
  } catch (error) {
    deps.logger.warn('A prompt could not be given', {
      server: parsed.server,
      error: errorMessage(error),
    });
    return {
      problem: `\`${parsed.server}\` could not give its prompt \`${parsed.name}\`: ${errorMessage(error)}`,
    };
  }
}
