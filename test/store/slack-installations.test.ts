import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshBotToken } from '../../src/adapters/slack/installs/rotation.ts';
import type { Database } from '../../src/store/database.ts';
import { SlackInstallations } from '../../src/store/credentials/slack-installations.ts';
import { testDatabase } from '../support/db.ts';
import { FakeSlack, SLACK_CLIENT } from '../support/fake-slack.ts';
import { FakeSlackInstalls } from '../support/fake-slack-installs.ts';

const KEY = Buffer.alloc(32, 9);

let replicaA: Database;
let replicaB: Database;
let slack: FakeSlack;
let installs: FakeSlackInstalls;

beforeAll(async () => {
  // Two replicas: two pools of connections to one database.
  [replicaA, replicaB] = await Promise.all([testDatabase(), testDatabase()]);
  slack = await new FakeSlack().start();
  installs = new FakeSlackInstalls(slack);
  installs.rotating = true;
});
afterAll(async () => {
  await slack.stop();
  await Promise.all([replicaA.close(), replicaB.close()]);
});

const clientOptions = () => ({ slackApiUrl: `${slack.apiUrl}/` });

function storeOn(db: Database, failures: unknown[] = []): SlackInstallations {
  return new SlackInstallations(db.prisma, {
    key: KEY,
    refresh: refreshBotToken({
      clientId: SLACK_CLIENT.id,
      clientSecret: SLACK_CLIENT.secret,
      clientOptions: clientOptions(),
    }),
    onRefreshFailed: (_id, error) => failures.push(error),
  });
}

/** A workspace installed with token rotation, as InstallProvider stores it. */
async function installRotating(store: SlackInstallations, team: string) {
  const code = installs.adminApproval({ team });
  const granted = await new WebClient(undefined, clientOptions()).oauth.v2.access({
    client_id: SLACK_CLIENT.id,
    client_secret: SLACK_CLIENT.secret,
    code,
  });
  await store.storeInstallation({
    team: { id: team },
    enterprise: undefined,
    user: { id: 'UINSTALLER', token: undefined, scopes: undefined },
    bot: {
      id: 'BBOT',
      userId: granted.bot_user_id!,
      scopes: ['chat:write'],
      token: granted.access_token!,
      refreshToken: granted.refresh_token!,
      expiresAt: Math.floor(Date.now() / 1000) + granted.expires_in!,
    },
    isEnterpriseInstall: false,
    authVersion: 'v2',
  });
  return granted;
}

const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });

/** The token rotation is due at once: its expiry moved into the past. */
const expire = (team: string, inMs = -1000) =>
  replicaA.prisma.slackInstallation.update({
    where: { id: `team:${team}` },
    data: { expiresAt: new Date(Date.now() + inMs) },
  });

describe('Slack token rotation across replicas', () => {
  it('refreshes each forced expiry exactly once between two replicas: 0 invalid_grant, 0 failed fetches', async () => {
    const a = storeOn(replicaA);
    const b = storeOn(replicaB);
    await installRotating(a, 'TROTATE');
    const before = { refreshes: installs.refreshes, invalidGrants: installs.invalidGrants };
    const rounds = 100;
    let failed = 0;
    const started = Date.now();
    for (let round = 0; round < rounds; round++) {
      await expire('TROTATE');
      // Three events on each replica at once, all finding the token expired.
      const fetched = await Promise.allSettled(
        [a, a, a, b, b, b].map((store) => store.fetchInstallation(query('TROTATE'))),
      );
      failed += fetched.filter((f) => f.status === 'rejected').length;
      const tokens = new Set(
        fetched.flatMap((f) => (f.status === 'fulfilled' ? [f.value.bot?.token] : [])),
      );
      // All six carry the one new token, and none carries a refresh token Bolt could spend.
      expect(tokens.size).toBe(1);
      for (const f of fetched)
        if (f.status === 'fulfilled') expect(f.value.bot?.refreshToken).toBeUndefined();
    }
    const elapsedMs = Date.now() - started;
    const refreshes = installs.refreshes - before.refreshes;
    const invalidGrants = installs.invalidGrants - before.invalidGrants;
    console.log(
      `rotation: ${rounds} forced expiries × 6 fetches on 2 replicas in ${elapsedMs} ms: ${refreshes} refreshes, ${invalidGrants} invalid_grant, ${failed} failed`,
    );
    expect({ refreshes, invalidGrants, failed }).toEqual({
      refreshes: rounds,
      invalidGrants: 0,
      failed: 0,
    });
    // The newest token works at Slack.
    const latest = (await a.forWorkspace('TROTATE')).bot!.token!;
    expect((await new WebClient(latest, clientOptions()).auth.test()).team_id).toBe('TROTATE');
  });

  it('keeps tokens sealed: neither the access nor the refresh token is in the row', async () => {
    const store = storeOn(replicaA);
    const granted = await installRotating(store, 'TSEALED');
    const raw = await replicaA.pool.query(
      `SELECT * FROM slack_installation WHERE id = 'team:TSEALED'`,
    );
    const text = JSON.stringify(raw.rows);
    expect(text).not.toContain(granted.access_token);
    expect(text).not.toContain(granted.refresh_token);
  });

  it('a refresh answered invalid_grant: the token still valid goes on; an expired one fails that fetch alone; nothing stored changes', async () => {
    const failures: unknown[] = [];
    const store = storeOn(replicaA, failures);
    const granted = await installRotating(store, 'TGRANT');
    await installRotating(store, 'TNEIGHBOUR');
    // Someone spent the refresh token elsewhere (a copy of the database, a second deployment).
    await new WebClient(undefined, clientOptions()).oauth.v2.access({
      client_id: SLACK_CLIENT.id,
      client_secret: SLACK_CLIENT.secret,
      grant_type: 'refresh_token',
      refresh_token: granted.refresh_token!,
    });
    const sealedBefore = (
      await replicaA.prisma.slackInstallation.findUniqueOrThrow({ where: { id: 'team:TGRANT' } })
    ).sealed;

    // Due soon, not expired: refused at Slack, the current token is still used.
    await expire('TGRANT', 60_000);
    const stillValid = await store.fetchInstallation(query('TGRANT'));
    expect(stillValid.bot?.token).toBe(granted.access_token);
    expect(String(failures.at(-1))).toMatch(/invalid_grant/);

    // Expired: that workspace's fetch fails, with Slack's word for it; its neighbour is served.
    await expire('TGRANT');
    await expect(store.fetchInstallation(query('TGRANT'))).rejects.toThrow(/invalid_grant/);
    await expire('TNEIGHBOUR');
    expect((await store.fetchInstallation(query('TNEIGHBOUR'))).bot?.token).toMatch(/TNEIGHBOUR/);
    const after = await replicaA.prisma.slackInstallation.findUniqueOrThrow({
      where: { id: 'team:TGRANT' },
    });
    expect(after.sealed).toBe(sealedBefore);
  });
});
