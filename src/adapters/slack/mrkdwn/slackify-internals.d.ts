/** The parts of slackify-markdown (4.x) that mrkdwn.ts builds its pipeline from, once. */
declare module 'slackify-markdown/src/definitions.js' {
  import type { Plugin } from 'unified';
  /** Fills the map with the text's link definitions, by identifier. */
  export const collectDefinitions: Plugin<[Record<string, { title: string | null; url: string }>]>;
  /** Takes the definitions out of the text. */
  export const removeDefinitions: Plugin;
}

declare module 'slackify-markdown/src/slackify.js' {
  import type { RemarkStringifyOptions } from 'remark-stringify';
  /** remark-stringify's options with Slack's handlers, which resolve references in the map. */
  function slackifyOptions(
    definitions: Readonly<Record<string, { title: string | null; url: string }>>,
  ): RemarkStringifyOptions;
  export = slackifyOptions;
}
