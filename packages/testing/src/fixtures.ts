import type { AmlSummary, KybCaseDetails, KybDocumentFile, KybStatus, KybStep, KycResult, ReopenEntry } from '@verikit/core';

/** A resolved document file (spec 2.6a). */
export function kybDocumentFileFixture(overrides: Partial<KybDocumentFile> = {}): KybDocumentFile {
  const id = overrides.id ?? 'doc_certificate';
  return {
    id,
    originalName: 'certificate-of-incorporation.pdf',
    mimeType: 'application/pdf',
    size: 48_213,
    createdAt: '2026-01-02T10:00:00.000Z',
    analysis: { matches: true },
    url: `/kyb/documents/${id}/url`,
    ...overrides,
  };
}

/** An AML summary (spec 2.7). */
export function amlSummaryFixture(overrides: Partial<AmlSummary> = {}): AmlSummary {
  return {
    refId: 'aml_primary',
    name: 'Acme Trading Ltd',
    status: 'CLEAR',
    businessRole: 'primary',
    businessName: 'Acme Trading Ltd',
    caseType: 'BUSINESS',
    sourceType: 'SANCTIONS',
    ongoingMonitoring: true,
    totalHits: 0,
    createdAt: '2026-01-02T10:05:00.000Z',
    reviewedAt: '2026-01-02T11:00:00.000Z',
    ...overrides,
  };
}

/** Options of {@link kybStepsFixture}. */
export interface KybStepsOptions {
  /** Whether the business has filled the steps in (values and files present). Default true. */
  filled?: boolean;
  /** Business name used in the filled values. */
  businessName?: string;
  /** Files of the document step (default: one certificate in its slot, one additional file). */
  files?: KybDocumentFile[];
  /** Registration number (default `09876543`). */
  registrationNumber?: string;
  /** Website (default `https://acme.test/`). */
  website?: string;
  /** Beneficial owners (default Jane Doe, 62 %). */
  owners?: Array<{ name: string; ownership: number }>;
  /** Related businesses (default Acme Holdings Ltd). */
  relatedBusinesses?: Array<{ name: string }>;
}

/** One step of every documented type (form with enrichment, address, document, ubo, relatedBusinesses). */
export function kybStepsFixture(options: KybStepsOptions = {}): KybStep[] {
  const filled = options.filled ?? true;
  const name = options.businessName ?? 'Acme Trading Ltd';
  const value = <T>(v: T): T | null => (filled ? v : null);
  const files = options.files ?? [
    kybDocumentFileFixture(),
    kybDocumentFileFixture({ id: 'doc_bank_statement', originalName: 'bank-statement.png', mimeType: 'image/png', size: 9_120 }),
  ];
  const [slotFile, ...additional] = filled ? files : [];
  return [
    {
      id: 'step_company',
      type: 'form',
      title: 'Company details',
      fields: [
        { key: 'legalName', title: 'Legal name', value: value(name), type: 'string', required: true },
        {
          key: 'registrationNumber',
          title: 'Registration number',
          value: value(options.registrationNumber ?? '09876543'),
          type: 'string',
          required: true,
        },
        {
          key: 'email',
          title: 'Contact email',
          value: value(`compliance@${new URL(options.website ?? 'https://acme.test/').hostname}`),
          type: 'string',
          format: 'email',
          required: false,
        },
        {
          key: 'website',
          title: 'Website',
          value: value(options.website ?? 'https://acme.test/'),
          type: ['string', 'null'],
          required: false,
        },
      ],
      ...(filled
        ? {
            enrichment: {
              names: { legal: name.toUpperCase() },
              industry: [{ code: '4690', label: 'Wholesale' }],
              company: { legalForm: 'LTD', yearStarted: 2012 },
            },
          }
        : {}),
    },
    {
      id: 'step_address',
      type: 'address',
      title: 'Registered address',
      fields: [
        {
          key: 'line1',
          title: 'Street',
          value: value('1 Market Street'),
          required: true,
          groupKey: 'registered',
          groupTitle: 'Registered office',
        },
        { key: 'city', title: 'City', value: value('London'), required: true, groupKey: 'registered', groupTitle: 'Registered office' },
        { key: 'country', title: 'Country', value: value('GB'), required: true, groupKey: 'registered', groupTitle: 'Registered office' },
      ],
    },
    {
      id: 'step_documents',
      type: 'document',
      title: 'Documents',
      // The slot structure is not in the spec; this fake uses { key, title, files }.
      documents: [{ key: 'incorporation', title: 'Certificate of incorporation', files: slotFile ? [slotFile] : [] }],
      additionalFiles: additional,
    },
    {
      id: 'step_owners',
      type: 'ubo',
      title: 'Beneficial owners',
      ubos: filled ? (options.owners ?? [{ name: 'Jane Doe', ownership: 62 }]) : [],
    },
    {
      id: 'step_related',
      type: 'relatedBusinesses',
      title: 'Related businesses',
      relatedBusinesses: filled ? (options.relatedBusinesses ?? [{ name: 'Acme Holdings Ltd' }]) : [],
    },
  ];
}

/** KYB case details (spec 2.2) with every part present; override any field. */
export function kybCaseDetailsFixture(overrides: Partial<KybCaseDetails> & { status?: KybStatus } = {}): KybCaseDetails {
  const status = overrides.status ?? 'COMPLETED';
  const started = status !== 'NOT_STARTED';
  const businessName = overrides.businessName === undefined ? (started ? 'Acme Trading Ltd' : null) : overrides.businessName;
  const reopenHistory: ReopenEntry[] = [];
  return {
    id: 'kyb_case_1',
    refId: 'business-1',
    status,
    flagType: 'NONE',
    businessName,
    flow: { id: 'flow_kyb_standard', title: 'Standard KYB', country: 'GB' },
    steps: kybStepsFixture({ filled: started, businessName: businessName ?? undefined }),
    amlScreening: {
      primary: started ? [amlSummaryFixture({ name: businessName ?? undefined, businessName: businessName ?? undefined })] : [],
      related: started
        ? [
            amlSummaryFixture({
              refId: 'aml_related',
              name: 'Acme Holdings Ltd',
              businessName: 'Acme Holdings Ltd',
              businessRole: 'related',
            }),
          ]
        : [],
    },
    ...(started
      ? {
          websiteAnalysis: {
            domain: 'acme.test',
            status: 'COMPLETED',
            initiatedAt: '2026-01-02T10:00:00.000Z',
            completedAt: '2026-01-02T10:02:00.000Z',
            data: { sslValid: true },
          },
        }
      : {}),
    reopenHistory,
    createdAt: '2026-01-02T09:00:00.000Z',
    updatedAt: '2026-01-02T11:00:00.000Z',
    ...overrides,
  };
}

/** A KYC result (spec 2.11: only `status` is documented; the rest is this fake's choice). */
export function kycResultFixture(overrides: Partial<KycResult> = {}): KycResult {
  return { refId: 'user-1', status: 'APPROVED', ...overrides };
}

/** The webhook event this kit (and its fake service) sends; the spec does not show the real shape. */
export interface FakeWebhookEvent {
  type: 'kyb.case.status_changed' | 'kyc.session.status_changed';
  data: { refId: string; status: string; previousStatus: string | null };
  createdAt: string;
}

/** A status-change event as the fake service sends it. */
export function webhookEventFixture(input: {
  kind: 'kyb' | 'kyc';
  refId: string;
  status: string;
  previousStatus?: string | null;
}): FakeWebhookEvent {
  return {
    type: input.kind === 'kyb' ? 'kyb.case.status_changed' : 'kyc.session.status_changed',
    data: { refId: input.refId, status: input.status, previousStatus: input.previousStatus ?? null },
    createdAt: new Date().toISOString(),
  };
}
