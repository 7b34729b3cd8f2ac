import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import { namingFor } from '../../../src/core/delivery/commands/naming.ts';
import type { Asker } from '../../../src/core/ports/platform/platform.ts';
import type { Database } from '../../../src/store/database.ts';
import { SealedPersonVault } from '../../../src/store/credentials/person-vault.ts';
import { SignIns } from '../../../src/tools/mcp/sign-in/sign-in.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';

let db: Database;
let llm: FakeOpenAi;
let engine: DeliveryEngine;
let vault: SealedPersonVault;
const workspace = `T-${randomUUID()}`;
const names = namingFor('slack');
const asker = (user: string): Asker => ({
  lane: { platform: 'slack', workspace, channel: 'C1', thread: '' },
  user,
});
const person = (user: string) => ({ platform: 'slack', workspace, user });
/** Discord's direct messages, outside any server: each person's own, an admin's too. */
const DIRECT_MESSAGES = `dm-${randomUUID()}`;
const directPerson = (user: string) => ({ platform: 'discord', workspace: DIRECT_MESSAGES, user });
const directAsker = (user: string): Asker => ({
  lane: { platform: 'discord', workspace: DIRECT_MESSAGES, channel: `D-${user}`, thread: '' },
  user,
});
const signedIn = async (user: string, server: string) =>
  (await vault.read(server, person(user)))?.tokens?.access_token;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  vault = new SealedPersonVault(db.prisma, randomBytes(32));
  const signIns = new SignIns([], {
    vault,
    identity: { redirectUrl: 'https://spool.example/mcp/oauth/callback' },
    linkUrl: 'https://spool.example/mcp/sign-in',
    platforms: {},
    onSignedIn: () => {},
    logger: silentLogger,
  });
  engine = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db) }),
    { policy: { rules: [], admins: ['UADMIN'] } },
    { signIns },
  );
  // Nothing is posted: commands answer the person who asked, through the adapter.
  const outbound = {
    render: (text: string) => [text],
    post: async () => 'posted',
    refuse: async () => {},
    showWorking: async () => async () => {},
  };
  engine.register('slack', outbound, {});
  engine.register('discord', outbound, { directMessages: DIRECT_MESSAGES });
  const record = (token: string) => ({
    serverUrl: 'https://notes.example/mcp',
    tokens: { access_token: token, token_type: 'Bearer' },
  });
  await vault.write('notes', person('UALICE'), record('alice-token'), 'https://auth.example');
  await vault.write('tracker', person('UALICE'), record('alice-tracker'), 'https://auth.example');
  await vault.write('notes', person('UBOB'), record('bob-token'), 'https://auth.example');
  for (const user of ['UALICE', 'UADMIN'])
    await vault.write('notes', directPerson(user), record(`${user}-dm`), 'https://auth.example');
});
afterAll(async () => {
  await llm?.stop();
  await db?.close();
});

describe('/spool logins and /spool logout', () => {
  it("lists a person their own sign-ins, and an admin everyone's", async () => {
    const own = await engine.logins(asker('UALICE'), names);
    expect(own).toMatch(/^You are signed in to:\n• notes, since .+ UTC\n• tracker, since .+ UTC$/);
    expect(await engine.logins(asker('UCAROL'), names)).toBe(
      'You are not signed in to any tool server.',
    );
    const all = await engine.logins(asker('UADMIN'), names);
    expect(all).toContain('• notes: <@UALICE>');
    expect(all).toContain('• notes: <@UBOB>');
    expect(all).toContain('• tracker: <@UALICE>');
  });

  it("lets a person end their own sign-in, not someone else's; an admin ends anyone's", async () => {
    expect(await engine.logout(asker('UBOB'), 'notes <@UALICE>', names)).toBe(
      "Only an admin can end someone else's sign-in.",
    );
    expect(await signedIn('UALICE', 'notes')).toBe('alice-token');
    expect(await engine.logout(asker('UALICE'), 'notes', names)).toBe(
      'You are signed out of notes; a later call asks to sign in again.',
    );
    expect(await signedIn('UALICE', 'notes')).toBeUndefined();
    expect(await signedIn('UALICE', 'tracker')).toBe('alice-tracker');
    expect(await engine.logout(asker('UALICE'), 'notes', names)).toBe(
      'You are not signed in to notes.',
    );
    expect(await engine.logout(asker('UADMIN'), 'notes <@UBOB|bob>', names)).toBe(
      '<@UBOB> is signed out of notes; a later call asks to sign in again.',
    );
    expect(await signedIn('UBOB', 'notes')).toBeUndefined();
    expect(await engine.logout(asker('UALICE'), '', names)).toMatch(/^Which server\?/);
  });

  it('makes an admin anyone in direct messages outside any workspace: their own sign-ins alone', async () => {
    const names = namingFor('discord');
    expect(await engine.logins(directAsker('UADMIN'), names)).toMatch(
      /^You are signed in to:\n• notes, since .+ UTC$/,
    );
    expect(await engine.logout(directAsker('UADMIN'), 'notes <@UALICE>', names)).toBe(
      "Only an admin can end someone else's sign-in.",
    );
    expect((await vault.read('notes', directPerson('UALICE')))?.tokens?.access_token).toBe(
      'UALICE-dm',
    );
  });

  it("answers a login for a server not used with each person's sign-in plainly", async () => {
    expect(await engine.login(asker('UALICE'), 'notes')).toBe(
      "notes is not a tool server used with each person's own sign-in here.",
    );
  });
});
