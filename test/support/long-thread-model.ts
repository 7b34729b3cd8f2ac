import { lastUserText, type ChatRequest, type ScriptedReply } from './fake-openai.ts';
import { grepperModel, readerModel, searcherModel } from './readers.ts';

type Call = NonNullable<ScriptedReply['toolCalls']>[number];

/** What a person asks in a long thread, as the model reads the newest user message. */
export const LONG_THREAD_ASKS = {
  read: (path: string) => `Read ${path} and list every fact in it.`,
  grep: (path: string, name: string) => `In ${path}, what is ${name}?`,
  backReference: (path: string, name: string) => `Earlier you opened ${path}: what was ${name}?`,
};

/**
 * A model that, turn by turn, does what the person asks in a long thread: reads a document whole
 * and lists every "FACT <name>: <value>" it read this turn (readerModel, shown only this turn's
 * messages: asked about one document, it lists that one's facts, not every fact in view), looks one fact up in a document
 * (grepperModel), answers a question about an earlier turn's result from what it still shows or by
 * searching the history (searcherModel), and answers small talk in a line. Like the models it
 * hands each turn to, it answers only from its request: a fact it can no longer see is a fact it
 * cannot give.
 */
export function longThreadModel(
  open: (path: string) => Call,
): (request: ChatRequest) => ScriptedReply {
  const reader = readerModel(
    (asked) => open(/^Read (\S+) /.exec(asked)![1]!),
    /FACT [\w-]+: [^\n"\\]+/g,
  );
  const grepper = grepperModel(open);
  // Small talk too: it answers what is neither an "Open" nor a question in a line.
  const searcher = searcherModel(open);
  return (request) => {
    const asked = lastUserText(request);
    if (/^Read \S+ and list every fact in it\.$/.test(asked)) {
      const from = request.messages.map((m) => m.role).lastIndexOf('user');
      return reader({ ...request, messages: request.messages.slice(from) });
    }
    if (/^In \S+, what is [\w-]+\?$/.test(asked)) return grepper(request);
    return searcher(request);
  };
}
