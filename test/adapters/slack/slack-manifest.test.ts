import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/process.ts';

/** The scopes each Web API method Spool calls needs (auth.test needs none). */
const SCOPES_BY_METHOD: Record<string, string[]> = {
  'auth.test': [],
  // A rotating token's refresh (the app's client id and secret, no token).
  'oauth.v2.access': [],
  'chat.postMessage': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.update': ['chat:write'],
  'assistant.threads.setStatus': ['chat:write'],
  'assistant.threads.setSuggestedPrompts': ['assistant:write'],
  'assistant.threads.setTitle': ['assistant:write'],
  'agents.sessions.setStatus': ['chat:write', 'assistant:write'],
  'conversations.replies': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
  'reactions.add': ['reactions:write'],
  'reactions.remove': ['reactions:write'],
  'files.uploadV2': ['files:write'],
  'files.info': ['files:read'],
  'files.delete': ['files:write'],
  'conversations.open': ['im:write'],
  'users.info': ['users:read'],
};

/** The adapter's source, every file of it in every folder (its unit tests aside): a method called anywhere counts. */
const SLACK_DIR = join(REPO_ROOT, 'src/adapters/slack');
const adapterSource = readdirSync(SLACK_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => readFileSync(join(SLACK_DIR, f), 'utf8'))
  .join('\n');

const slackPage = readFileSync(join(REPO_ROOT, 'docs/slack.md'), 'utf8');
const manifest = /```yaml\n([\s\S]*?)```/.exec(slackPage)![1]!;
const listUnder = (key: string) => {
  const block = new RegExp(`\\n(\\s*)${key}:\\n((?:\\1\\s+- .*\\n)+)`).exec(manifest)![2]!;
  return block
    .split('\n')
    .filter(Boolean)
    .map((line) =>
      line
        .trim()
        .replace(/^- /, '')
        .replace(/\s+#.*$/, ''),
    );
};

describe('the Slack app manifest (docs/slack.md)', () => {
  it('grants the scope of every Web API method the adapter calls', () => {
    const methods = [
      ...new Set(
        [...adapterSource.matchAll(/client\.((?:[a-z]+\.)+[a-zA-Z]+)\(/g)].map((m) => m[1]!),
      ),
    ];
    expect(methods.length).toBeGreaterThan(5);
    // A method the table does not know fails here: add its scopes to the table and the manifest.
    for (const method of methods) expect(Object.keys(SCOPES_BY_METHOD)).toContain(method);
    const granted = listUnder('bot');
    for (const method of methods)
      for (const scope of SCOPES_BY_METHOD[method]!) expect(granted).toContain(scope);
  });

  it('grants files:read, since the adapter downloads the files people share', () => {
    expect(adapterSource).toMatch(/fetchFileBytes\(/);
    expect(listUnder('bot')).toContain('files:read');
  });

  it('turns interactivity on, since approval prompts have buttons the adapter listens to', () => {
    expect(adapterSource).toMatch(/\bapp\.action\(/);
    expect(manifest).toMatch(/interactivity:\n\s+is_enabled: true/);
  });

  it('subscribes to the events the adapter handles, DMs and group DMs included, with the messages tab on', () => {
    const listened = [...adapterSource.matchAll(/\bapp\.event\('([a-z_]+)'/g)].map((m) => m[1]!);
    expect(listened.sort()).toEqual([
      'agent_session_stopped',
      'app_mention',
      'app_uninstalled',
      'assistant_thread_context_changed',
      'assistant_thread_started',
      'reaction_added',
      'reaction_removed',
      'tokens_revoked',
    ]);
    expect(listUnder('bot_events').sort()).toEqual(
      [...listened, 'message.channels', 'message.groups', 'message.im', 'message.mpim'].sort(),
    );
    expect(listUnder('bot')).toEqual(
      expect.arrayContaining(['app_mentions:read', 'commands', 'reactions:read']),
    );
    expect(manifest).toMatch(/messages_tab_enabled: true/);
    expect(manifest).toMatch(/messages_tab_read_only_enabled: false/);
  });
});
