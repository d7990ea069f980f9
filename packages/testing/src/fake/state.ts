import { randomBytes } from 'node:crypto';
import {
  InvalidArgumentError,
  type KybCaseDetails,
  type KybDocumentFile,
  type KybStatus,
  type KycResult,
  type ReopenEntry,
} from '@verikit/core';
import { amlSummaryFixture, kybCaseDetailsFixture, kybDocumentFileFixture, kybStepsFixture } from '../fixtures.js';
import { bankStatementPng, pdfDocument } from './documents.js';
import { type FakeChange, type FakeHistoryEntry, historySince, nextUpdatedAt } from './history.js';

/** Credentials of one organization of the fake service. */
export interface FakeCredentials {
  /** Private API key (`x-api-key`). */
  apiKey: string;
  /** Public SDK key for hosted links. */
  publicKey: string;
  /** Webhook signing secret (`whsec_...`). */
  webhookSecret: string;
  /**
   * The reviewer console's secret (`fake.reviewerUrl` carries it once as `?token=`): it acts for the
   * organization, so it is neither the API key nor anything a hosted page shows.
   */
  reviewerToken: string;
}

/** Options for an organization. */
export interface FakeOrganizationOptions extends Partial<FakeCredentials> {
  /** Whether the organization may use KYC (otherwise KYC calls answer 403). Default true. */
  kycEnabled?: boolean;
}

/** An organization held by the fake. */
export interface FakeOrganization extends FakeCredentials {
  id: string;
  kycEnabled: boolean;
}

/** A KYB flow as this fake lists it (the spec does not show the shape). */
export interface FakeFlow {
  id: string;
  title: string;
  country: string;
  default: boolean;
}

interface StoredCase {
  org: string;
  details: KybCaseDetails;
  history: FakeHistoryEntry[];
}

interface StoredSession {
  org: string;
  refId: string;
  flowId: string | undefined;
  result: KycResult;
  history: FakeHistoryEntry[];
}

/** The KYC statuses the fake uses; the spec lists none, so each is configurable. */
export interface FakeKycStatuses {
  initial: string;
  approved: string;
  rejected: string;
  review: string;
}

/**
 * What a business enters on the hosted page (the spec: "the business details are collected in the
 * hosted flow"); every field has a default. `outcome: 'flagged'` gives the case an AML hit, the
 * reason a reviewer rejects it for.
 */
export interface KybSubmission {
  businessName?: string;
  registrationNumber?: string;
  /** A domain or URL; the website analysis runs on its host. */
  website?: string;
  /** The beneficial owner's name. */
  ownerName?: string;
  outcome?: 'clear' | 'flagged';
}

/** Values the hosted page starts with for a case (what the app knows of the business), before the business edits them. */
export type KybPrefill = Pick<KybSubmission, 'businessName' | 'registrationNumber' | 'website' | 'ownerName'>;

/** Everything the fake keeps, as JSON: what `stateFile` holds (a file from before histories and reviewer tokens lacks them). */
export interface FakeStateSnapshot {
  organizations: Array<Omit<FakeOrganization, 'reviewerToken'> & { reviewerToken?: string }>;
  cases: Array<[string, Omit<StoredCase, 'history'> & { history?: FakeHistoryEntry[] }]>;
  sessions: Array<[string, Omit<StoredSession, 'history'> & { history?: FakeHistoryEntry[] }]>;
  documents: Array<[string, { org: string; file: KybDocumentFile; content: string }]>;
  prefills: Array<[string, KybPrefill]>;
  caseCounter: number;
}

/** A change of a case or session, for its webhook (every change after the creation sends one). */
export interface StatusChange {
  org: string;
  kind: 'kyb' | 'kyc';
  refId: string;
  status: string;
  previousStatus: string | null;
  /** What changed (a submission or a reopen can leave the status as it was). */
  change: FakeChange;
  /** The history version this change made. */
  version: number;
  /** The `updatedAt` the API answers with from this change on. */
  updatedAt: string;
}

const key = (org: string, refId: string) => `${org}\u0000${refId}`;

/** The website as a URL: what was entered (a domain or URL), else one made up from the business name. */
function websiteOf(entered: string | undefined, businessName: string): string {
  const text = entered?.trim() ?? '';
  if (text !== '') {
    try {
      return new URL(/^https?:\/\//i.test(text) ? text : `https://${text}`).href;
    } catch {
      // Not a host name: made up below, as for none.
    }
  }
  const slug =
    businessName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'business';
  return `https://${slug}.test/`;
}
const token = (prefix: string, bytes = 18) => `${prefix}${randomBytes(bytes).toString('base64url')}`;

/** Everything the fake knows, scoped by organization, with the transitions the control API drives. */
export class FakeState {
  readonly organizations: FakeOrganization[] = [];
  readonly flows: FakeFlow[] = [
    { id: 'flow_kyb_standard', title: 'Standard KYB', country: 'GB', default: true },
    { id: 'flow_kyb_us', title: 'US KYB', country: 'US', default: false },
  ];
  private readonly cases = new Map<string, StoredCase>();
  private readonly sessions = new Map<string, StoredSession>();
  private readonly documents = new Map<string, { org: string; file: KybDocumentFile; content: Buffer }>();
  private readonly prefills = new Map<string, KybPrefill>();
  private caseCounter = 0;

  constructor(
    readonly kycStatuses: FakeKycStatuses,
    private readonly onChange: (change: StatusChange) => void,
    /** Told after every change of what the fake keeps (for `stateFile`). */
    private readonly onSave: () => void = () => {},
  ) {}

  /** Everything kept, as JSON. */
  snapshot(): FakeStateSnapshot {
    return {
      organizations: this.organizations,
      cases: [...this.cases],
      sessions: [...this.sessions],
      documents: [...this.documents].map(([id, doc]) => [id, { ...doc, content: doc.content.toString('base64') }]),
      prefills: [...this.prefills],
      caseCounter: this.caseCounter,
    };
  }

  /** Takes back what {@link snapshot} gave (at start, from `stateFile`). */
  restore(snapshot: FakeStateSnapshot): void {
    this.organizations.push(...snapshot.organizations.map((o) => ({ ...o, reviewerToken: o.reviewerToken ?? token('rvw_', 24) })));
    for (const [k, v] of snapshot.cases) {
      const { status, updatedAt, createdAt } = v.details;
      this.cases.set(k, { ...v, history: v.history ?? historySince(status, updatedAt ?? createdAt ?? new Date().toISOString()) });
    }
    for (const [k, v] of snapshot.sessions) {
      const { status, updatedAt, createdAt } = v.result;
      const since = String(updatedAt ?? createdAt ?? new Date().toISOString());
      this.sessions.set(k, { ...v, result: { ...v.result, updatedAt: since }, history: v.history ?? historySince(status, since) });
    }
    for (const [id, doc] of snapshot.documents) this.documents.set(id, { ...doc, content: Buffer.from(doc.content, 'base64') });
    for (const [k, v] of snapshot.prefills) this.prefills.set(k, v);
    this.caseCounter = snapshot.caseCounter;
  }

  /** Sets what the hosted page shows first for a case (before it exists, too). */
  prefill(org: string, refId: string, values: KybPrefill): void {
    this.prefills.set(key(org, refId), { ...this.prefills.get(key(org, refId)), ...values });
    this.onSave();
  }

  prefillFor(org: string, refId: string): KybPrefill {
    return this.prefills.get(key(org, refId)) ?? {};
  }

  /** Adds an organization with generated credentials unless given. */
  addOrganization(options: FakeOrganizationOptions = {}): FakeOrganization {
    const org: FakeOrganization = {
      id: `org_${this.organizations.length + 1}`,
      apiKey: options.apiKey ?? token('sk_test_'),
      publicKey: options.publicKey ?? token('pk_test_', 12),
      webhookSecret: options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`,
      reviewerToken: options.reviewerToken ?? token('rvw_', 24),
      kycEnabled: options.kycEnabled ?? true,
    };
    this.organizations.push(org);
    this.onSave();
    return org;
  }

  byApiKey(apiKey: string | undefined): FakeOrganization | undefined {
    return apiKey === undefined || apiKey === '' ? undefined : this.organizations.find((o) => o.apiKey === apiKey);
  }

  isPublicKey(value: string | undefined): boolean {
    return value !== undefined && this.organizations.some((o) => o.publicKey === value);
  }

  flowFor(id: string | undefined): FakeFlow | undefined {
    return id === undefined ? this.flows.find((f) => f.default) : this.flows.find((f) => f.id === id);
  }

  /** Creates a case, or returns the existing one for the same refId (the caller issues a fresh token). */
  createCase(org: string, input: { refId: string; flow: FakeFlow; country?: string; countryState?: string }): KybCaseDetails {
    const existing = this.cases.get(key(org, input.refId));
    if (existing) return existing.details;
    const now = nextUpdatedAt([]);
    const details: KybCaseDetails = {
      ...kybCaseDetailsFixture({ status: 'NOT_STARTED', businessName: null }),
      id: `kyb_${++this.caseCounter}_${randomBytes(4).toString('hex')}`,
      refId: input.refId,
      flow: { id: input.flow.id, title: input.flow.title, country: input.country ?? input.flow.country },
      createdAt: now,
      updatedAt: now,
    };
    this.cases.set(key(org, input.refId), { org, details, history: historySince(details.status, now) });
    this.onSave();
    return details;
  }

  getCase(org: string, refId: string): KybCaseDetails | undefined {
    return this.cases.get(key(org, refId))?.details;
  }

  /** Case lookup for control calls, which may omit the organization when there is one match. */
  findCase(refId: string, org?: string): StoredCase {
    const found = org !== undefined ? this.cases.get(key(org, refId)) : [...this.cases.values()].find((c) => c.details.refId === refId);
    if (!found) throw new InvalidArgumentError(`fake service: no KYB case with refId ${JSON.stringify(refId)}`);
    return found;
  }

  /** Every version of a case or session, oldest first (a copy). */
  history(kind: 'kyb' | 'kyc', refId: string, org?: string): FakeHistoryEntry[] {
    const { history } = kind === 'kyb' ? this.findCase(refId, org) : this.findSession(refId, org);
    return history.map((entry) => ({ ...entry }));
  }

  /** The cases and sessions of an organization, oldest first, for the reviewer console. */
  itemsOf(org: string): { cases: StoredCase[]; sessions: StoredSession[] } {
    return {
      cases: [...this.cases.values()].filter((c) => c.org === org),
      sessions: [...this.sessions.values()].filter((s) => s.org === org),
    };
  }

  /** Whether a KYC status is one of the two decisions (approved, rejected). */
  isFinalKyc(status: string): boolean {
    return status === this.kycStatuses.approved || status === this.kycStatuses.rejected;
  }

  /**
   * Records one change already applied to `item` (its new state carries `updatedAt`): a history
   * version, the state file, and the webhook.
   */
  private record(
    item: StoredCase | StoredSession,
    kind: 'kyb' | 'kyc',
    refId: string,
    entry: Omit<FakeHistoryEntry, 'version'>,
    previousStatus: string,
  ): void {
    const version = item.history.length + 1;
    item.history.push({ version, ...entry });
    this.onSave();
    this.onChange({
      org: item.org,
      kind,
      refId,
      status: entry.status,
      previousStatus,
      change: entry.change,
      version,
      updatedAt: entry.updatedAt,
    });
  }

  /** Moves a case to `status` (nothing when it is there already). */
  setCaseStatus(refId: string, status: KybStatus, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const previous = stored.details.status;
    if (previous === status) return stored.details;
    const updatedAt = nextUpdatedAt(stored.history);
    stored.details = { ...stored.details, status, updatedAt };
    this.record(stored, 'kyb', refId, { status, updatedAt, change: 'status' }, previous);
    return stored.details;
  }

  /**
   * A reviewer's decision, from any state: `decided`, or `overturned` when it replaces a final one.
   * The reason is kept in the history only: the details payload carries no reviewer notes (spec 2.10).
   */
  decideCase(refId: string, status: 'COMPLETED' | 'REJECTED', reason: string | undefined, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const previous = stored.details.status;
    if (previous === status) return stored.details;
    const updatedAt = nextUpdatedAt(stored.history);
    stored.details = { ...stored.details, status, updatedAt };
    const change = previous === 'COMPLETED' || previous === 'REJECTED' ? 'overturned' : 'decided';
    this.record(stored, 'kyb', refId, { status, updatedAt, change, ...(reason ? { reason } : {}) }, previous);
    return stored.details;
  }

  /**
   * Fills the case as the hosted portal would: form values, real document files, AML screening,
   * website analysis; with `status`, the outcome the submission led to, in the same change.
   */
  submitCase(refId: string, input: KybSubmission = {}, org?: string, status?: KybStatus): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const previous = stored.details.status;
    const businessName = input.businessName?.trim() || 'Acme Trading Ltd';
    const registrationNumber = input.registrationNumber?.trim() || '09876543';
    const ownerName = input.ownerName?.trim() || 'Jane Doe';
    const website = websiteOf(input.website, businessName);
    const domain = new URL(website).hostname;
    const holding = `${businessName.replace(/\s+(Ltd|Limited|Inc|LLC|GmbH|Corporation|Corp)\.?$/i, '')} Holdings Ltd`;
    const flagged = input.outcome === 'flagged';
    const suffix = stored.details.id;
    const now = nextUpdatedAt(stored.history);
    const certificate = pdfDocument('Certificate of incorporation', [
      `Company name: ${businessName}`,
      `Company number: ${registrationNumber}`,
      `Registered office: 1 Market Street, London`,
      `Issued to reference ${refId} by the fake verification service.`,
    ]);
    const statement = bankStatementPng(`${businessName}/${refId}`);
    const files = [
      kybDocumentFileFixture({
        id: `doc_${suffix}_cert`,
        url: `/kyb/documents/doc_${suffix}_cert/url`,
        createdAt: now,
        size: certificate.length,
      }),
      kybDocumentFileFixture({
        id: `doc_${suffix}_bank`,
        originalName: 'bank-statement.png',
        mimeType: 'image/png',
        size: statement.length,
        createdAt: now,
        url: `/kyb/documents/doc_${suffix}_bank/url`,
      }),
    ];
    this.documents.set(files[0]!.id, { org: stored.org, file: files[0]!, content: certificate });
    this.documents.set(files[1]!.id, { org: stored.org, file: files[1]!, content: statement });
    stored.details = {
      ...stored.details,
      businessName,
      // The spec lists no flag types: this fake says HIGH_RISK for a case with an AML hit.
      flagType: flagged ? 'HIGH_RISK' : 'NONE',
      steps: kybStepsFixture({
        filled: true,
        businessName,
        registrationNumber,
        website,
        owners: [{ name: ownerName, ownership: 62 }],
        relatedBusinesses: [{ name: holding }],
        files,
      }),
      amlScreening: {
        primary: [
          amlSummaryFixture({
            refId: `aml_${suffix}`,
            name: businessName,
            businessName,
            createdAt: now,
            reviewedAt: now,
            // The spec lists no AML statuses: this fake says POTENTIAL_MATCH for a hit.
            ...(flagged ? { status: 'POTENTIAL_MATCH', totalHits: 2 } : {}),
          }),
        ],
        related: [
          amlSummaryFixture({ refId: `aml_${suffix}_rel`, name: holding, businessName: holding, businessRole: 'related', createdAt: now }),
          amlSummaryFixture({
            refId: `aml_${suffix}_owner`,
            name: ownerName,
            businessName,
            // Spec 2.7 allows `primary` or `related`: the owner is screened among the related parties.
            businessRole: 'related',
            caseType: 'PERSON',
            createdAt: now,
          }),
        ],
      },
      websiteAnalysis: { domain, status: 'COMPLETED', initiatedAt: now, completedAt: now, data: { sslValid: true } },
      status: status ?? previous,
      updatedAt: now,
    };
    this.record(stored, 'kyb', refId, { status: stored.details.status, updatedAt: now, change: 'submitted' }, previous);
    return stored.details;
  }

  /** Reopens steps: one change that records the reopen and moves the case back to IN_PROGRESS (the spec does not show the state after a reopen). */
  reopenCase(refId: string, stepIds: string[], reason?: string, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const previous = stored.details.status;
    const updatedAt = nextUpdatedAt(stored.history);
    const entry: ReopenEntry = { stepIds, reopenedAt: updatedAt, ...(reason ? { reason } : {}) };
    stored.details = { ...stored.details, status: 'IN_PROGRESS', reopenHistory: [...stored.details.reopenHistory, entry], updatedAt };
    this.record(stored, 'kyb', refId, { status: 'IN_PROGRESS', updatedAt, change: 'reopened', ...(reason ? { reason } : {}) }, previous);
    return stored.details;
  }

  document(org: string, id: string) {
    const doc = this.documents.get(id);
    return doc && doc.org === org ? doc : undefined;
  }

  documentById(id: string) {
    return this.documents.get(id);
  }

  createSession(org: string, refId: string, flowId: string | undefined): StoredSession {
    const existing = this.sessions.get(key(org, refId));
    if (existing) return existing;
    const now = nextUpdatedAt([]);
    const status = this.kycStatuses.initial;
    const session: StoredSession = {
      org,
      refId,
      flowId,
      result: { refId, status, createdAt: now, updatedAt: now },
      history: historySince(status, now),
    };
    this.sessions.set(key(org, refId), session);
    this.onSave();
    return session;
  }

  getSession(org: string, refId: string): StoredSession | undefined {
    return this.sessions.get(key(org, refId));
  }

  /** Session lookup for control calls, which may omit the organization when there is one match. */
  findSession(refId: string, org?: string): StoredSession {
    const found = org !== undefined ? this.sessions.get(key(org, refId)) : [...this.sessions.values()].find((s) => s.refId === refId);
    if (!found) throw new InvalidArgumentError(`fake service: no KYC session with refId ${JSON.stringify(refId)}`);
    return found;
  }

  /**
   * Moves a session to `status` (nothing when it is there already); `details` are further result
   * fields (the fake's `reason` for a rejection); `change` says whose doing it was.
   */
  setSessionStatus(
    refId: string,
    status: string,
    org?: string,
    details: Record<string, unknown> = {},
    change: 'status' | 'submitted' = 'status',
  ): KycResult {
    const session = this.findSession(refId, org);
    const previous = session.result.status;
    if (previous === status) return session.result;
    const updatedAt = nextUpdatedAt(session.history);
    session.result = { ...session.result, ...details, status, updatedAt };
    this.record(session, 'kyc', refId, { status, updatedAt, change }, previous);
    return session.result;
  }

  /**
   * A reviewer's decision, from any state: `decided`, or `overturned` when it replaces a final one.
   * `reason` becomes the result's `reason`; an earlier one goes (an approval carries none).
   */
  decideSession(refId: string, status: string, reason: string | undefined, org?: string): KycResult {
    if (!this.isFinalKyc(status))
      throw new InvalidArgumentError(
        `fake service: a KYC decision is ${JSON.stringify(this.kycStatuses.approved)} or ${JSON.stringify(this.kycStatuses.rejected)}, not ${JSON.stringify(status)}`,
      );
    const session = this.findSession(refId, org);
    const { reason: earlier, ...rest } = session.result;
    const previous = rest.status;
    if (previous === status && earlier === reason) return session.result;
    const updatedAt = nextUpdatedAt(session.history);
    session.result = { ...rest, status, updatedAt, ...(reason ? { reason } : {}) };
    const change = this.isFinalKyc(previous) ? 'overturned' : 'decided';
    this.record(session, 'kyc', refId, { status, updatedAt, change, ...(reason ? { reason } : {}) }, previous);
    return session.result;
  }
}
