import { createHash, randomUUID } from 'node:crypto';
import type { KybCaseDetails, KycDecision, KycResult } from '@verikit/core';
import type { Queryable } from '@verikit/postgres';

/** A signed-in person and their business, as the app's own database holds them. */
export interface Account {
  name: string;
  businessName: string;
  userRefId: string;
  businessRefId: string;
}

/** What the app knows of a person's verification: only what it read from the service after a webhook. */
export interface KycState {
  status: string;
  decision: KycDecision;
  /** Why it was rejected, when the service said (the fake does; the spec shows no such field). */
  reason: string | null;
  updatedAt: Date;
}

/** What the app knows of a business's verification. */
export interface KybState {
  details: KybCaseDetails;
  updatedAt: Date;
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
CREATE TABLE IF NOT EXISTS example.kyc_results (
  ref_id text PRIMARY KEY, status text NOT NULL, decision text NOT NULL, reason text,
  service_updated_at text NOT NULL, event_id text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example.kyb_results (
  ref_id text PRIMARY KEY, status text NOT NULL, details text NOT NULL,
  service_updated_at text NOT NULL, event_id text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());`;

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

const asAccount = (row: Record<string, unknown>): Account => ({
  name: row.name as string,
  businessName: row.business_name as string,
  userRefId: row.user_ref_id as string,
  businessRefId: row.business_ref_id as string,
});

/**
 * The example's own data, in the same database as verikit's inbox: businesses, the people who act
 * for them, sessions and the results the worker wrote. Results are written only through the
 * worker's transaction (`ctx.sql`), so a result and the event's "done" commit together: saved exactly once.
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

  async kyc(refId: string): Promise<KycState | undefined> {
    const { rows } = await this.db.query('SELECT status, decision, reason, updated_at FROM example.kyc_results WHERE ref_id = $1', [refId]);
    const row = rows[0];
    return row === undefined
      ? undefined
      : {
          status: row.status as string,
          decision: row.decision as KycDecision,
          reason: row.reason as string | null,
          updatedAt: row.updated_at as Date,
        };
  }

  async kyb(refId: string): Promise<KybState | undefined> {
    const { rows } = await this.db.query('SELECT details, updated_at FROM example.kyb_results WHERE ref_id = $1', [refId]);
    const row = rows[0];
    return row === undefined
      ? undefined
      : { details: JSON.parse(row.details as string) as KybCaseDetails, updatedAt: row.updated_at as Date };
  }

  /** Changes whenever this account's results change: the dashboard polls it to refresh for its own user only. */
  async stamp(account: Account): Promise<string> {
    const { rows } = await this.db.query(
      `SELECT (SELECT event_id || service_updated_at FROM example.kyc_results WHERE ref_id = $1) AS kyc,
              (SELECT event_id || service_updated_at FROM example.kyb_results WHERE ref_id = $2) AS kyb`,
      [account.userRefId, account.businessRefId],
    );
    return `${rows[0]?.kyc ?? '-'}/${rows[0]?.kyb ?? '-'}`;
  }

  /** The business's prefill for the hosted page, from what the app knows. */
  static prefillOf(account: Account): { businessName: string; ownerName: string } {
    return { businessName: account.businessName, ownerName: account.name };
  }

  /**
   * Writes a KYB result in the worker's transaction. An older read never overwrites a newer one
   * (webhooks may arrive out of order; the service's `updatedAt` says which is newer).
   */
  static async saveKyb(tx: Queryable, refId: string, details: KybCaseDetails, eventId: string): Promise<void> {
    await tx.query(
      `INSERT INTO example.kyb_results (ref_id, status, details, service_updated_at, event_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (ref_id) DO UPDATE SET status = EXCLUDED.status, details = EXCLUDED.details,
         service_updated_at = EXCLUDED.service_updated_at, event_id = EXCLUDED.event_id, updated_at = now()
       WHERE example.kyb_results.service_updated_at <= EXCLUDED.service_updated_at`,
      [refId, details.status, JSON.stringify(details), details.updatedAt ?? '', eventId],
    );
  }

  /** Writes a KYC result in the worker's transaction, newer over older as for KYB. */
  static async saveKyc(tx: Queryable, refId: string, result: KycResult, decision: KycDecision, eventId: string): Promise<void> {
    const reason = typeof result.reason === 'string' ? result.reason : null;
    const updated = typeof result.updatedAt === 'string' ? result.updatedAt : '';
    await tx.query(
      `INSERT INTO example.kyc_results (ref_id, status, decision, reason, service_updated_at, event_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (ref_id) DO UPDATE SET status = EXCLUDED.status, decision = EXCLUDED.decision, reason = EXCLUDED.reason,
         service_updated_at = EXCLUDED.service_updated_at, event_id = EXCLUDED.event_id, updated_at = now()
       WHERE example.kyc_results.service_updated_at <= EXCLUDED.service_updated_at`,
      [refId, result.status, decision, reason, updated, eventId],
    );
  }
}
