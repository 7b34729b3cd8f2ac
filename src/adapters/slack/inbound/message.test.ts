import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ANSWERED_SUBTYPES,
  editOf,
  filesOf,
  senderOf,
  slackText,
  wordsOf,
  type SlackEvent,
} from './message.ts';

const BOT = 'UBOT';

describe('who is talking', () => {
  it('is a person, an app the policy decides on, or nobody Spool answers', () => {
    expect(senderOf({ user: 'U1', text: 'hi' }, BOT)).toBe('person');
    expect(senderOf({ user: 'USLACKBOT', text: 'Reminder: standup' }, BOT)).toBe('never');
    // Slack's own notices in a DM: "<@U1> archived the channel <#C1>".
    const notice = { user: 'USLACK', channel_type: 'im', text: '<@U1> archived the channel <#C1>' };
    expect(senderOf(notice, BOT)).toBe('never');
    expect(senderOf({ user: BOT, text: 'my own reply' }, BOT)).toBe('never');
    expect(senderOf({ bot_id: 'BSELF', text: 'my own post' }, BOT, 'BSELF')).toBe('never');
    expect(senderOf({ user: 'U2', bot_id: 'B2', text: 'from another bot' }, BOT)).toBe('app');
    expect(senderOf({ user: 'U2', bot_profile: { id: 'B2' }, text: 'a workflow' }, BOT)).toBe(
      'app',
    );
    expect(senderOf({ user: 'U2', app_id: 'A2', text: 'an integration' }, BOT)).toBe('app');
    expect(senderOf({ subtype: 'bot_message', username: 'legacy', text: 'hook' }, BOT)).toBe('app');
  });

  it('answers plain messages, files, broadcasts and /me; nothing else', () => {
    expect([...ANSWERED_SUBTYPES].sort()).toEqual(['file_share', 'me_message', 'thread_broadcast']);
  });
});

describe('the words of a message', () => {
  it('are its text without the mention of Spool', () => {
    expect(wordsOf({ text: `<@${BOT}> what is up?` }, BOT)).toBe('what is up?');
  });

  it('come from rich_text blocks when the text is empty', () => {
    const blocks = [
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'user', user_id: BOT },
              { type: 'text', text: ' see ' },
              { type: 'link', url: 'https://example.com', text: 'this' },
              { type: 'emoji', name: 'eyes' },
            ],
          },
          {
            type: 'rich_text_list',
            style: 'ordered',
            elements: [
              { type: 'rich_text_section', elements: [{ type: 'text', text: 'first' }] },
              { type: 'rich_text_section', elements: [{ type: 'text', text: 'second' }] },
            ],
          },
          { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'npm test' }] },
          { type: 'rich_text_quote', elements: [{ type: 'text', text: 'quoted\nlines' }] },
        ],
      },
    ];
    expect(wordsOf({ text: '', blocks }, BOT)).toBe(
      'see this (https://example.com):eyes:\n1. first\n2. second\n```\nnpm test\n```\n> quoted\n> lines',
    );
  });

  it('carry a forwarded message with who wrote it and where, beside the words sent with it', () => {
    const forwarded = {
      is_share: true,
      author_id: 'U7',
      channel_id: 'C7',
      from_url: 'https://example.slack.com/archives/C7/p1',
      text: 'deploy is broken',
      message_blocks: [
        {
          message: {
            blocks: [
              {
                type: 'rich_text',
                elements: [
                  {
                    type: 'rich_text_section',
                    elements: [{ type: 'text', text: 'deploy is broken\nsince 10:02' }],
                  },
                ],
              },
            ],
          },
        },
      ],
    };
    expect(wordsOf({ text: '', attachments: [forwarded] }, BOT)).toBe(
      'Forwarded message from <@U7> in <#C7> (https://example.slack.com/archives/C7/p1):\n> deploy is broken\n> since 10:02',
    );
    expect(wordsOf({ text: 'why?', attachments: [forwarded] }, BOT)).toMatch(
      /^why\?\n\nForwarded message from <@U7>/,
    );
  });

  it('leave link previews out when there are words, and are empty, never made up, when there are none', () => {
    const preview = {
      title: 'Example Domain',
      text: 'This domain is for use in examples',
      from_url: 'https://example.com',
    };
    expect(wordsOf({ text: 'look https://example.com', attachments: [preview] }, BOT)).toBe(
      'look https://example.com',
    );
    expect(wordsOf({ text: '', attachments: [preview] }, BOT)).toContain(
      'This domain is for use in examples',
    );
    expect(wordsOf({ text: `<@${BOT}>` }, BOT)).toBe('');
    expect(wordsOf({ text: 42, blocks: 'nonsense', attachments: [null, 'x'] }, BOT)).toBe('');
  });
});

describe('the files of a message', () => {
  it('keeps files with a URL or an id, and drops entries that are neither', () => {
    const hidden = { id: 'F1', mode: 'file_access', file_access: 'check_file_info' };
    const shown = { id: 'F2', name: 'a.txt', url_private: 'https://files.slack.com/a.txt' };
    expect(filesOf({ files: [hidden, shown, { name: 'no id' }, 'junk'] })).toEqual([hidden, shown]);
    expect(filesOf({ files: 'junk' })).toEqual([]);
  });
});

describe('the words of real forwarded messages (test/fixtures/slack-payloads)', () => {
  const eventOf = (file: string) =>
    (
      JSON.parse(
        readFileSync(
          new URL(`../../../../test/fixtures/slack-payloads/${file}`, import.meta.url),
          'utf8',
        ),
      ) as { payload: { event: SlackEvent } }
    ).payload.event;

  it('read a forward with no words of its own as the forwarded message, its author and its channel', () => {
    expect(wordsOf(eventOf('24-channel-forwarded-message-no-mention.json'), BOT)).toBe(
      'Forwarded message from <@U05JAA9EN4T> in <#C07KTH1T4CQ> (https://myworkspace.slack.com/archives/C07KTH1T4CQ/p1724952281623809):\n> 123',
    );
  });

  it('read a share with a comment as the comment, then the shared message', () => {
    const words = wordsOf(eventOf('25-channel-shared-message-with-comment-no-mention.json'), BOT);
    expect(words).toMatch(
      /^hello check that out!\n\nForwarded message from <@U05JAA9EN4T> in <#C07KTH1T4CQ> .*:\n> this will be shared with a message$/,
    );
  });

  it('read the rich_text blocks of a real message when its text is empty (the text removed here)', () => {
    const event = eventOf('25-channel-shared-message-with-comment-no-mention.json');
    expect(wordsOf({ ...event, text: '', attachments: [] }, BOT)).toBe('hello check that out!');
  });
});

describe('Slack text read as Slack writes it (escapes, mentions, channels, links)', () => {
  // The `text` of real events, from zulip/zulip's zerver/webhooks/slack/fixtures (each one's
  // rich_text blocks carry the same words unescaped).
  it('decodes the escapes of a code block and a quote', () => {
    const code =
      '```def is_bot_message(payload: WildValue) -&gt; bool:\n    app_api_id = payload.get("api_app_id").tame(check_none_or(check_string))```';
    expect(slackText(code)).toBe(
      '```def is_bot_message(payload: WildValue) -> bool:\n    app_api_id = payload.get("api_app_id").tame(check_none_or(check_string))```',
    );
    expect(slackText('&gt; This is a quote')).toBe('> This is a quote');
    expect(slackText('a &lt;b&gt; &amp;&amp; c &amp;lt;')).toBe('a <b> && c &lt;');
  });

  it('reads mentions, channels and special mentions as a person does, keeping ids the model can use', () => {
    expect(slackText('~_*<@U074VRHQ11T>*_~ ~_*<#C06P6T3QGD7|general>*_~ ~_*<!channel>*_~ ')).toBe(
      '~_*<@U074VRHQ11T>*_~ ~_*#general*_~ ~_*@channel*_~ ',
    );
    expect(slackText('<!channel> <!here> Sorry for mentioning.')).toBe(
      '@channel @here Sorry for mentioning.',
    );
    expect(slackText('<!everyone> <!here|here> <@U1|ann> <#C7>')).toBe(
      '@everyone @here @ann (<@U1>) <#C7>',
    );
    expect(slackText('ping <!subteam^S123|@oncall> and <!subteam^S456>')).toBe(
      'ping @oncall and <!subteam^S456>',
    );
    expect(slackText('<!date^1392734382^{date_num}|2014-02-18> ok')).toBe('2014-02-18 ok');
  });

  it('reads links as their label and address, or the address alone', () => {
    expect(slackText('*<https://app.clickup.com/t/25567147/86cw30wf2|asd>*')).toBe(
      '*asd (https://app.clickup.com/t/25567147/86cw30wf2)*',
    );
    expect(slackText('URL with normal text in a thread reply: <https://github.com>')).toBe(
      'URL with normal text in a thread reply: https://github.com',
    );
    expect(slackText('<https://a.example/?q=1&amp;r=2|a &amp; b>')).toBe(
      'a & b (https://a.example/?q=1&r=2)',
    );
    expect(
      slackText('<https://github.com|https://github.com> <mailto:bob@example.com|bob@example.com>'),
    ).toBe('https://github.com bob@example.com');
  });

  it("are what wordsOf gives for text, without Spool's mention, while rich_text blocks are taken as they are", () => {
    expect(wordsOf({ text: `<@${BOT}|spool> is x -&gt; y &amp; <#C1|ops>?` }, BOT)).toBe(
      'is x -> y & #ops?',
    );
    const blocks = [
      {
        type: 'rich_text',
        elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'a &gt; b' }] }],
      },
    ];
    expect(wordsOf({ text: '', blocks }, BOT)).toBe('a &gt; b');
    expect(
      wordsOf(
        { text: '', attachments: [{ text: 'deploy &lt;prod&gt; <https://ci.example|run>' }] },
        BOT,
      ),
    ).toBe('Attachment:\n> deploy <prod> run (https://ci.example)');
  });
});

describe('what a person attaches beside their own words', () => {
  const cell = (text: string) => ({ type: 'raw_text', text });
  const rich = (text: string) => ({
    type: 'rich_text',
    elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }],
  });

  it('reads a pasted table (an attachment of table blocks) as rows, marked as attached', () => {
    const table = {
      type: 'table',
      rows: [
        [cell('Region'), cell('Revenue')],
        [cell('EMEA'), rich('1.2M | up')],
      ],
    };
    const event = { text: `<@${BOT}> summarize this`, attachments: [{ id: 1, blocks: [table] }] };
    expect(wordsOf(event, BOT)).toBe(
      'summarize this\n\nAttachment:\n> | Region | Revenue |\n> | EMEA | 1.2M \\| up |',
    );
  });

  it('reads an unfurled message beside the words, but a link preview only when alone', () => {
    const unfurl = {
      is_msg_unfurl: true,
      author_id: 'U2',
      channel_id: 'C2',
      text: 'the deploy failed at step 3',
    };
    expect(wordsOf({ text: 'why?', attachments: [unfurl] }, BOT)).toBe(
      'why?\n\nForwarded message from <@U2> in <#C2>:\n> the deploy failed at step 3',
    );
    const preview = { from_url: 'https://a.example', title: 'A site', service_name: 'A' };
    expect(wordsOf({ text: 'look https://a.example', attachments: [preview] }, BOT)).toBe(
      'look https://a.example',
    );
  });
});

describe('edits', () => {
  it('takes a mention Slack sends again as app_mention, same ts, with `edited`, as an edit', () => {
    const mention = {
      type: 'app_mention',
      user: 'U1',
      channel: 'C1',
      ts: '1700000000.000100',
      text: `<@${BOT}> what about Friday?`,
      edited: { user: 'U1', ts: '1700000060.000000' },
    };
    expect(editOf(mention, BOT)).toEqual({
      messageKey: 'C1:1700000000.000100',
      user: 'U1',
      text: 'what about Friday?',
      editKey: 'C1:1700000000.000100:edited:1700000060.000000',
    });
    expect(editOf({ ...mention, edited: undefined }, BOT)).toBeUndefined();
  });

  it('gives the message_changed of the same edit the same key, so both are one edit', () => {
    const changed = {
      type: 'message',
      subtype: 'message_changed',
      channel: 'C1',
      message: {
        user: 'U1',
        ts: '1700000000.000100',
        text: `<@${BOT}> what about Friday?`,
        edited: { user: 'U1', ts: '1700000060.000000' },
      },
      previous_message: {
        user: 'U1',
        ts: '1700000000.000100',
        text: `<@${BOT}> what about Monday?`,
      },
    };
    expect(editOf(changed, BOT)?.editKey).toBe('C1:1700000000.000100:edited:1700000060.000000');
  });
});
