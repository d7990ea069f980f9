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

const slug = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'anonymous';

const SCHEMA = `CREATE SCHEMA IF NOT EXISTS example;
CREATE TABLE IF NOT EXISTS example.accounts (
  key text PRIMARY KEY, name text NOT NULL, business_name text NOT NULL,
  user_ref_id text NOT NULL, business_ref_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example.sessions (
  id text PRIMARY KEY, account_key text NOT NULL REFERENCES example.accounts (key), created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example.kyc_results (
  ref_id text PRIMARY KEY, status text NOT NULL, decision text NOT NULL, reason text,
  service_updated_at text NOT NULL, event_id text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS example.kyb_results (
  ref_id text PRIMARY KEY, status text NOT NULL, details text NOT NULL,
  service_updated_at text NOT NULL, event_id text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());`;

const asAccount = (row: Record<string, unknown>): Account => ({
  name: row.name as string,
  businessName: row.business_name as string,
  userRefId: row.user_ref_id as string,
  businessRefId: row.business_ref_id as string,
});

/**
 * The example's own data, in the same database as verikit's inbox: accounts, sessions and the
 * results the worker wrote. Results are written only through the worker's transaction (`ctx.sql`),
 * so a result and the event's "done" commit together: saved exactly once.
 */
export class Database {
  constructor(private readonly db: Queryable) {}

  /** Creates the tables when missing. */
  async migrate(): Promise<void> {
    for (const statement of SCHEMA.split(';\n')) await this.db.query(statement);
  }

  /** The account for this name and business (made on first sign-in), bound to a new session. */
  async signIn(name: string, businessName: string, sessionId: string): Promise<Account> {
    const key = `${slug(name)}|${slug(businessName)}`;
    await this.db.query(
      `INSERT INTO example.accounts (key, name, business_name, user_ref_id, business_ref_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key) DO NOTHING`,
      [key, name, businessName, `user-${slug(name)}`, `business-${slug(businessName)}`],
    );
    await this.db.query('INSERT INTO example.sessions (id, account_key) VALUES ($1, $2)', [sessionId, key]);
    return (await this.accountFor(sessionId)) as Account;
  }

  async signOut(sessionId: string): Promise<void> {
    await this.db.query('DELETE FROM example.sessions WHERE id = $1', [sessionId]);
  }

  async accountFor(sessionId: string | undefined): Promise<Account | undefined> {
    if (sessionId === undefined) return undefined;
    const { rows } = await this.db.query(
      'SELECT a.* FROM example.sessions s JOIN example.accounts a ON a.key = s.account_key WHERE s.id = $1',
      [sessionId],
    );
    return rows[0] === undefined ? undefined : asAccount(rows[0]);
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
