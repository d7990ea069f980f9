import { createHash, randomUUID } from 'node:crypto';
import {
  type EventKind,
  type KybCaseDetails,
  type KycDecision,
  type KycResult,
  type LedgerChangeContext,
  type LedgerKey,
  missedWebhook,
  type ObservationSource,
} from '@verikit/core';
import type { Queryable } from '@verikit/postgres';

/** A signed-in person and their business, as the app's own database holds them. */
export interface Account {
  name: string;
  businessName: string;
  userRefId: string;
  businessRefId: string;
}

/** Where a status came from: the change that brought it, as the ledger recorded it. */
export interface Provenance {
  /** The change's version: counts the changes the ledger saw, from 1. */
  version: number;
  /** A webhook led to it, or the reconciler's polling found it. */
  source: ObservationSource;
  /** Found by polling although a webhook should have told of it: the webhook was lost. */
  missedWebhook: boolean;
  /** When the app recorded it. */
  at: Date;
}

/** One change of a verification, for the dashboard's history. */
export interface ChangeRecord extends Provenance {
  previous: string | null;
  status: string;
}

/** What the app knows of a person's verification: what `onChange` wrote, read from the service by refId. */
export interface KycState {
  status: string;
  decision: KycDecision;
  /** Why it was rejected, when the service said (the fake does; the spec shows no such field). */
  reason: string | null;
  provenance: Provenance;
  history: ChangeRecord[];
}

/** What the app knows of a business's verification. */
export interface KybState {
  details: KybCaseDetails;
  provenance: Provenance;
  history: ChangeRecord[];
}

const SCHEMA = `CREATE SCHEMA IF NOT EXISTS example;
CREATE TABLE IF NOT EXISTS example.businesses (
  ref_id text PRIMARY KEY, name text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example.accounts (
  user_ref_id text PRIMARY KEY, name text NOT NULL, business_ref_id text NOT NULL REFERENCES example.businesses (ref_id),
  created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (business_ref_id, name));
CREATE TABLE IF NOT EXISTS example.sessions (
  id_hash text PRIMARY KEY, role text NOT NULL CHECK (role IN ('user', 'operator')),
  user_ref_id text REFERENCES example.accounts (user_ref_id),
  created_at timestamptz NOT NULL, last_seen_at timestamptz NOT NULL,
  CHECK ((role = 'user') = (user_ref_id IS NOT NULL)));
CREATE TABLE IF NOT EXISTS example.results (
  kind text NOT NULL CHECK (kind IN ('kyb', 'kyc')), ref_id text NOT NULL, version integer NOT NULL, status text NOT NULL,
  decision text, result text NOT NULL, source text NOT NULL, missed_webhook boolean NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (kind, ref_id));
CREATE TABLE IF NOT EXISTS example.result_changes (
  kind text NOT NULL, ref_id text NOT NULL, version integer NOT NULL, previous text, status text NOT NULL,
  source text NOT NULL, missed_webhook boolean NOT NULL, changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, ref_id, version))`;

/** The previous version's results tables: written by the worker from webhooks, before the ledger. */
const EARLIER_RESULTS = [
  { kind: 'kyb', table: 'example.kyb_results' },
  { kind: 'kyc', table: 'example.kyc_results' },
] as const;

/** The first version keyed accounts by a slug of the names typed (its `accounts.key` column). */
const FIRST_VERSION = `SELECT 1 FROM information_schema.columns
  WHERE table_schema = 'example' AND table_name = 'accounts' AND column_name = 'key'`;

/**
 * The data was written by the example's first version, whose refIds were made from the names
 * typed at sign-in: different people and businesses could share one, and so share results and
 * documents. Which result belongs to whom cannot be told afterwards, so it is not migrated.
 */
export class OutdatedDataError extends Error {
  readonly code = 'outdated_data';
  constructor() {
    super('the data was made by an earlier version of the example, whose refIds came from the names typed at sign-in');
  }
}

/** Who a session is for: a signed-in person, or the operator. */
export type Session = { role: 'user'; account: Account } | { role: 'operator' };

/** How long a session lives on the server: unused for `idleMs`, or at most `maxAgeMs` after sign-in. */
export interface SessionLifetime {
  idleMs: number;
  maxAgeMs: number;
}

/** Options of {@link Database}. */
export interface DatabaseOptions {
  sessions: SessionLifetime;
  /** The clock sessions are timed by (ms since the epoch); tests move it. */
  now?: () => number;
}

/** A session's last use is written at most this often, not on every request (the dashboard polls each second). */
const TOUCH_EVERY_MS = 60_000;

/** Your reference for a new business or person: random, made once and stored, never derived from what anyone typed. */
const newRefId = (kind: 'business' | 'person') => `${kind}_${randomUUID()}`;

/** Only a hash of a session id is stored: a copy of the table signs no one in. */
const hashOf = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

const provenanceOf = (row: Record<string, unknown>): Provenance => ({
  version: Number(row.version),
  source: row.source as ObservationSource,
  missedWebhook: row.missed_webhook === true,
  at: row.changed_at as Date,
});

const asAccount = (row: Record<string, unknown>): Account => ({
  name: row.name as string,
  businessName: row.business_name as string,
  userRefId: row.user_ref_id as string,
  businessRefId: row.business_ref_id as string,
});

/**
 * The example's own data, in the same database as verikit's inbox and ledger: businesses, the
 * people who act for them, sessions, and what `onChange` wrote of their verifications. Results are
 * written only through the ledger's transaction (`ctx.sql`), so a result and the change the ledger
 * recorded commit together: each change written once, in the service's order.
 */
export class Database {
  private readonly now: () => number;

  constructor(
    private readonly db: Queryable,
    private readonly options: DatabaseOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Creates the tables when missing; throws {@link OutdatedDataError} on the first version's data. */
  async migrate(): Promise<void> {
    if ((await this.db.query(FIRST_VERSION)).rows.length > 0) throw new OutdatedDataError();
    for (const statement of SCHEMA.split(';\n')) await this.db.query(statement);
  }

  /**
   * The account for this person of this business, both exactly as typed (made on first sign-in,
   * each with a refId of its own), bound to a new session.
   */
  async signIn(name: string, businessName: string, sessionId: string): Promise<Account> {
    await this.db.query('INSERT INTO example.businesses (ref_id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
      newRefId('business'),
      businessName,
    ]);
    const { rows } = await this.db.query('SELECT ref_id FROM example.businesses WHERE name = $1', [businessName]);
    const businessRefId = rows[0]?.ref_id as string;
    await this.db.query(
      `INSERT INTO example.accounts (user_ref_id, name, business_ref_id) VALUES ($1, $2, $3)
       ON CONFLICT (business_ref_id, name) DO NOTHING`,
      [newRefId('person'), name, businessRefId],
    );
    const account = await this.db.query('SELECT user_ref_id FROM example.accounts WHERE business_ref_id = $1 AND name = $2', [
      businessRefId,
      name,
    ]);
    const userRefId = account.rows[0]?.user_ref_id as string;
    await this.startSession(sessionId, 'user', userRefId);
    return { name, businessName, userRefId, businessRefId };
  }

  /** A session for the operator (who proved the operator secret). */
  async signInOperator(sessionId: string): Promise<void> {
    await this.startSession(sessionId, 'operator', null);
  }

  private async startSession(sessionId: string, role: Session['role'], userRefId: string | null): Promise<void> {
    const now = this.now();
    const { idleMs, maxAgeMs } = this.options.sessions;
    // Expired sessions go when someone signs in: the table never grows without bound.
    await this.db.query('DELETE FROM example.sessions WHERE last_seen_at < $1 OR created_at < $2', [
      new Date(now - idleMs),
      new Date(now - maxAgeMs),
    ]);
    await this.db.query('INSERT INTO example.sessions (id_hash, role, user_ref_id, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)', [
      hashOf(sessionId),
      role,
      userRefId,
      new Date(now),
    ]);
  }

  /** Ends a session (sign-out). */
  async signOut(sessionId: string): Promise<void> {
    await this.db.query('DELETE FROM example.sessions WHERE id_hash = $1', [hashOf(sessionId)]);
  }

  /** The live session with this id, or undefined: unknown, signed out, unused too long, or too old. */
  async session(sessionId: string | undefined): Promise<Session | undefined> {
    if (sessionId === undefined || sessionId === '') return undefined;
    const id = hashOf(sessionId);
    const { rows } = await this.db.query(
      `SELECT s.role, s.created_at, s.last_seen_at, a.name, a.user_ref_id, b.name AS business_name, b.ref_id AS business_ref_id
       FROM example.sessions s
       LEFT JOIN example.accounts a ON a.user_ref_id = s.user_ref_id
       LEFT JOIN example.businesses b ON b.ref_id = a.business_ref_id
       WHERE s.id_hash = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const now = this.now();
    const lastSeen = (row.last_seen_at as Date).getTime();
    if (now - lastSeen > this.options.sessions.idleMs || now - (row.created_at as Date).getTime() > this.options.sessions.maxAgeMs) {
      await this.signOut(sessionId);
      return undefined;
    }
    if (now - lastSeen > TOUCH_EVERY_MS)
      await this.db.query('UPDATE example.sessions SET last_seen_at = $2 WHERE id_hash = $1', [id, new Date(now)]);
    return row.role === 'operator' ? { role: 'operator' } : { role: 'user', account: asAccount(row) };
  }

  /** The person's verification as the last change recorded it, with its history; undefined before the first. */
  async kyc(refId: string): Promise<KycState | undefined> {
    const row = await this.current('kyc', refId);
    if (row === undefined) return undefined;
    const result = JSON.parse(row.result as string) as KycResult;
    return {
      status: row.status as string,
      decision: row.decision as KycDecision,
      reason: typeof result.reason === 'string' ? result.reason : null,
      provenance: provenanceOf(row),
      history: await this.history('kyc', refId),
    };
  }

  /** The business's verification as the last change recorded it, with its history; undefined before the first. */
  async kyb(refId: string): Promise<KybState | undefined> {
    const row = await this.current('kyb', refId);
    if (row === undefined) return undefined;
    return {
      details: JSON.parse(row.result as string) as KybCaseDetails,
      provenance: provenanceOf(row),
      history: await this.history('kyb', refId),
    };
  }

  private async current(kind: EventKind, refId: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await this.db.query(
      'SELECT version, status, decision, result, source, missed_webhook, changed_at FROM example.results WHERE kind = $1 AND ref_id = $2',
      [kind, refId],
    );
    return rows[0];
  }

  private async history(kind: EventKind, refId: string): Promise<ChangeRecord[]> {
    const { rows } = await this.db.query(
      `SELECT version, previous, status, source, missed_webhook, changed_at FROM example.result_changes
       WHERE kind = $1 AND ref_id = $2 ORDER BY version`,
      [kind, refId],
    );
    return rows.map((row) => ({ ...provenanceOf(row), previous: row.previous as string | null, status: row.status as string }));
  }

  /** Changes whenever this account's results change: the dashboard polls it to refresh for its own user only. */
  async stamp(account: Account): Promise<string> {
    const { rows } = await this.db.query(
      `SELECT (SELECT version FROM example.results WHERE kind = 'kyc' AND ref_id = $1) AS kyc,
              (SELECT version FROM example.results WHERE kind = 'kyb' AND ref_id = $2) AS kyb`,
      [account.userRefId, account.businessRefId],
    );
    return `${rows[0]?.kyc ?? '-'}/${rows[0]?.kyb ?? '-'}`;
  }

  /**
   * The previous version's results were written from webhooks alone, outside the ledger: each of
   * their verifications is handed to `track` (the ledger then reads it from the service, soon), and
   * the tables go. Run after `migrate`, once the ledger is ready; running it again finds nothing.
   */
  async adoptEarlierResults(track: (key: LedgerKey) => Promise<unknown>): Promise<number> {
    let adopted = 0;
    for (const { kind, table } of EARLIER_RESULTS) {
      const { rows: exists } = await this.db.query('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
      if (exists[0]?.present !== true) continue;
      const { rows } = await this.db.query(`SELECT ref_id FROM ${table}`);
      for (const row of rows) await track({ kind, refId: row.ref_id as string });
      await this.db.query(`DROP TABLE ${table}`);
      adopted += rows.length;
    }
    return adopted;
  }

  /** The business's prefill for the hosted page, from what the app knows. */
  static prefillOf(account: Account): { businessName: string; ownerName: string } {
    return { businessName: account.businessName, ownerName: account.name };
  }

  /**
   * Writes one change of a verification, in the transaction that records it in the ledger (`ctx.sql`
   * of `onChange`): the result row moves to it and the history gains it, or neither does. The ledger
   * runs this once per change, in the service's order; the version guard and the history's key keep
   * that true here too: a result row never goes back to an older version, and a change is never written twice.
   */
  static async recordChange(tx: Queryable, change: LedgerChangeContext<Queryable>, decision: KycDecision | null): Promise<void> {
    const missed = missedWebhook(change);
    await tx.query(
      `INSERT INTO example.results (kind, ref_id, version, status, decision, result, source, missed_webhook)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (kind, ref_id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, decision = EXCLUDED.decision,
         result = EXCLUDED.result, source = EXCLUDED.source, missed_webhook = EXCLUDED.missed_webhook, changed_at = now()
       WHERE example.results.version < EXCLUDED.version`,
      [change.kind, change.refId, change.version, change.current, decision, JSON.stringify(change.result), change.source, missed],
    );
    await tx.query(
      `INSERT INTO example.result_changes (kind, ref_id, version, previous, status, source, missed_webhook)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [change.kind, change.refId, change.version, change.previous, change.current, change.source, missed],
    );
  }
}
