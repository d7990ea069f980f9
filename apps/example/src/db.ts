import type { KybCaseDetails, KycDecision } from '@verikit/core';

/** A signed-in person and their business, as the app's own database would hold them. */
export interface Account {
  name: string;
  businessName: string;
  userRefId: string;
  businessRefId: string;
}

/** What the app knows of a verification: only what it read from the service after a webhook. */
export interface VerificationState {
  kyc?: { status: string; decision: KycDecision; updatedAt: Date };
  kyb?: { details: KybCaseDetails; updatedAt: Date };
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'anonymous';

/** The example's in-memory database: accounts, sessions and verification results. */
export class Database {
  /** Bumped on every change, so open dashboards know to refresh. */
  version = 0;
  private readonly accounts = new Map<string, Account>();
  private readonly sessions = new Map<string, string>();
  private readonly states = new Map<string, VerificationState>();

  signIn(name: string, businessName: string, sessionId: string): Account {
    const key = `${slug(name)}|${slug(businessName)}`;
    let account = this.accounts.get(key);
    if (!account) {
      account = { name, businessName, userRefId: `user-${slug(name)}`, businessRefId: `business-${slug(businessName)}` };
      this.accounts.set(key, account);
    }
    this.sessions.set(sessionId, key);
    return account;
  }

  signOut(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  accountFor(sessionId: string | undefined): Account | undefined {
    const key = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    return key === undefined ? undefined : this.accounts.get(key);
  }

  state(refId: string): VerificationState {
    return this.states.get(refId) ?? {};
  }

  saveKyb(refId: string, details: KybCaseDetails): void {
    this.states.set(refId, { ...this.state(refId), kyb: { details, updatedAt: new Date() } });
    this.version++;
  }

  saveKyc(refId: string, status: string, decision: KycDecision): void {
    this.states.set(refId, { ...this.state(refId), kyc: { status, decision, updatedAt: new Date() } });
    this.version++;
  }
}
