import type { SignInListing } from '../../src/core/ports/parked/sign-ins.ts';
import type {
  PendingSignIn,
  Person,
  PersonRecord,
  PersonVault,
} from '../../src/tools/mcp/sign-in/person-oauth.ts';

const keyOf = (server: string, p: Person) =>
  JSON.stringify([server, p.platform, p.workspace, p.user]);

/**
 * People's sign-ins kept in memory, for a client run as one process with no database (the
 * conformance suite's client); the bot keeps them sealed in PostgreSQL (src/store/credentials/person-vault.ts).
 */
export class MemoryPersonVault implements PersonVault {
  private readonly records = new Map<
    string,
    { server: string; person: Person; record: PersonRecord; at: Date }
  >();
  private readonly pending = new Map<string, PendingSignIn>();

  async read(server: string, person: Person) {
    return this.records.get(keyOf(server, person))?.record;
  }

  async write(server: string, person: Person, record: PersonRecord) {
    this.records.set(keyOf(server, person), { server, person, record, at: new Date() });
  }

  async remove(server: string, person: Person) {
    return this.records.delete(keyOf(server, person));
  }

  async latest(server: string) {
    const kept = [...this.records.values()].filter((r) => r.server === server);
    return kept.sort((a, b) => b.at.getTime() - a.at.getTime())[0];
  }

  async list(where: { platform: string; workspace: string; user?: string }) {
    return [...this.records.values()]
      .filter(
        ({ person: p }) =>
          p.platform === where.platform &&
          p.workspace === where.workspace &&
          (where.user === undefined || p.user === where.user),
      )
      .map((r): SignInListing => ({ server: r.server, user: r.person.user, updatedAt: r.at }));
  }

  async pend(signIn: PendingSignIn) {
    this.pending.set(signIn.state, signIn);
  }

  async peek(state: string) {
    const signIn = this.pending.get(state);
    return signIn && signIn.expiresAt > new Date() ? signIn : undefined;
  }

  async claim(state: string) {
    const signIn = this.pending.get(state);
    this.pending.delete(state);
    return signIn && signIn.expiresAt > new Date() ? signIn : undefined;
  }
}
