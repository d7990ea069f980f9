import { randomBytes } from 'node:crypto';
import type { KybCaseDetails, KybDocumentFile, KybStatus, KycResult, ReopenEntry } from '@verikit/core';
import { amlSummaryFixture, kybCaseDetailsFixture, kybDocumentFileFixture, kybStepsFixture } from '../fixtures.js';

/** Credentials of one organization of the fake service. */
export interface FakeCredentials {
  /** Private API key (`x-api-key`). */
  apiKey: string;
  /** Public SDK key for hosted links. */
  publicKey: string;
  /** Webhook signing secret (`whsec_...`). */
  webhookSecret: string;
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
}

interface StoredSession {
  org: string;
  refId: string;
  flowId: string | undefined;
  result: KycResult;
}

/** The KYC statuses the fake uses; the spec lists none, so each is configurable. */
export interface FakeKycStatuses {
  initial: string;
  approved: string;
  rejected: string;
  review: string;
}

/** A status change, for webhooks. */
export interface StatusChange {
  org: string;
  kind: 'kyb' | 'kyc';
  refId: string;
  status: string;
  previousStatus: string | null;
}

const key = (org: string, refId: string) => `${org}\u0000${refId}`;
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
  private caseCounter = 0;

  constructor(
    readonly kycStatuses: FakeKycStatuses,
    private readonly onChange: (change: StatusChange) => void,
  ) {}

  /** Adds an organization with generated credentials unless given. */
  addOrganization(options: FakeOrganizationOptions = {}): FakeOrganization {
    const org: FakeOrganization = {
      id: `org_${this.organizations.length + 1}`,
      apiKey: options.apiKey ?? token('sk_test_'),
      publicKey: options.publicKey ?? token('pk_test_', 12),
      webhookSecret: options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`,
      kycEnabled: options.kycEnabled ?? true,
    };
    this.organizations.push(org);
    return org;
  }

  byApiKey(apiKey: string | undefined): FakeOrganization | undefined {
    return apiKey === undefined ? undefined : this.organizations.find((o) => o.apiKey === apiKey);
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
    const now = new Date().toISOString();
    const details: KybCaseDetails = {
      ...kybCaseDetailsFixture({ status: 'NOT_STARTED', businessName: null }),
      id: `kyb_${++this.caseCounter}_${randomBytes(4).toString('hex')}`,
      refId: input.refId,
      flow: { id: input.flow.id, title: input.flow.title, country: input.country ?? input.flow.country },
      createdAt: now,
      updatedAt: now,
    };
    this.cases.set(key(org, input.refId), { org, details });
    return details;
  }

  getCase(org: string, refId: string): KybCaseDetails | undefined {
    return this.cases.get(key(org, refId))?.details;
  }

  /** Case lookup for control calls, which may omit the organization when there is one match. */
  findCase(refId: string, org?: string): StoredCase {
    const found = org !== undefined ? this.cases.get(key(org, refId)) : [...this.cases.values()].find((c) => c.details.refId === refId);
    if (!found) throw new Error(`fake service: no KYB case with refId ${JSON.stringify(refId)}`);
    return found;
  }

  setCaseStatus(refId: string, status: KybStatus, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const previous = stored.details.status;
    if (previous === status) return stored.details;
    stored.details = { ...stored.details, status, updatedAt: new Date().toISOString() };
    this.onChange({ org: stored.org, kind: 'kyb', refId, status, previousStatus: previous });
    return stored.details;
  }

  /** Fills the case as the hosted portal would: form values, files, AML, website analysis. */
  submitCase(refId: string, input: { businessName?: string } = {}, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const businessName = input.businessName ?? 'Acme Trading Ltd';
    const suffix = stored.details.id;
    const files = [
      kybDocumentFileFixture({
        id: `doc_${suffix}_cert`,
        url: `/kyb/documents/doc_${suffix}_cert/url`,
        createdAt: new Date().toISOString(),
      }),
      kybDocumentFileFixture({
        id: `doc_${suffix}_bank`,
        originalName: 'bank-statement.png',
        mimeType: 'image/png',
        size: 9_120,
        url: `/kyb/documents/doc_${suffix}_bank/url`,
      }),
    ];
    for (const file of files) {
      const content = Buffer.from(`%FAKE ${file.mimeType} ${file.originalName} for ${refId}\n`.repeat(64));
      this.documents.set(file.id, { org: stored.org, file: { ...file, size: content.length }, content });
    }
    stored.details = {
      ...stored.details,
      businessName,
      steps: kybStepsFixture({ filled: true, businessName, files: files.map((f) => this.documents.get(f.id)!.file) }),
      amlScreening: {
        primary: [amlSummaryFixture({ refId: `aml_${suffix}`, name: businessName, businessName })],
        related: [
          amlSummaryFixture({
            refId: `aml_${suffix}_rel`,
            name: 'Acme Holdings Ltd',
            businessName: 'Acme Holdings Ltd',
            businessRole: 'related',
          }),
        ],
      },
      websiteAnalysis: {
        domain: 'acme.test',
        status: 'COMPLETED',
        initiatedAt: new Date().toISOString(),
        completedAt: new Date().toISOString(),
        data: { sslValid: true },
      },
      updatedAt: new Date().toISOString(),
    };
    return stored.details;
  }

  reopenCase(refId: string, stepIds: string[], reason?: string, org?: string): KybCaseDetails {
    const stored = this.findCase(refId, org);
    const entry: ReopenEntry = { stepIds, reopenedAt: new Date().toISOString(), ...(reason ? { reason } : {}) };
    stored.details = { ...stored.details, reopenHistory: [...stored.details.reopenHistory, entry] };
    // The spec does not show the state after a reopen; this fake moves the case back to IN_PROGRESS.
    return this.setCaseStatus(refId, 'IN_PROGRESS', stored.org);
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
    const session: StoredSession = {
      org,
      refId,
      flowId,
      result: { refId, status: this.kycStatuses.initial, createdAt: new Date().toISOString() },
    };
    this.sessions.set(key(org, refId), session);
    return session;
  }

  getSession(org: string, refId: string): StoredSession | undefined {
    return this.sessions.get(key(org, refId));
  }

  setSessionStatus(refId: string, status: string, org?: string): KycResult {
    const session = org !== undefined ? this.sessions.get(key(org, refId)) : [...this.sessions.values()].find((s) => s.refId === refId);
    if (!session) throw new Error(`fake service: no KYC session with refId ${JSON.stringify(refId)}`);
    const previous = session.result.status;
    if (previous === status) return session.result;
    session.result = { ...session.result, status, updatedAt: new Date().toISOString() };
    this.onChange({ org: session.org, kind: 'kyc', refId, status, previousStatus: previous });
    return session.result;
  }
}
