/** A minimal details payload that satisfies spec 2.2. */
export function detailsPayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'case_1',
    refId: 'biz-1',
    status: 'COMPLETED',
    flagType: 'LOW',
    businessName: 'Acme Ltd',
    flow: { id: 'flow_1', title: 'Standard', country: 'GB' },
    steps: [
      {
        id: 's1',
        type: 'form',
        title: 'Company',
        fields: [{ key: 'name', title: 'Name', value: 'Acme Ltd', required: true, type: 'string' }],
        enrichment: { names: { legal: 'ACME LTD' }, industry: [{ code: '6201' }] },
      },
      {
        id: 's2',
        type: 'address',
        title: 'Address',
        fields: [{ key: 'city', title: 'City', value: 'London', required: true, groupKey: 'addr' }],
      },
      {
        id: 's3',
        type: 'document',
        title: 'Documents',
        documents: [
          {
            key: 'incorporation',
            files: [
              {
                id: 'doc_1',
                originalName: 'inc.pdf',
                mimeType: 'application/pdf',
                size: 1234,
                url: '/kyb/documents/doc_1/url',
                analysis: { matches: true },
              },
            ],
          },
        ],
        additionalFiles: [{ id: 'doc_2', originalName: 'extra.png', mimeType: 'image/png', size: 99, url: '/kyb/documents/doc_2/url' }],
      },
      { id: 's4', type: 'ubo', title: 'Owners', ubos: [{ name: 'Jane' }] },
      { id: 's5', type: 'relatedBusinesses', title: 'Related', relatedBusinesses: [] },
    ],
    amlScreening: {
      primary: [{ status: 'CLEAR', businessRole: 'primary', totalHits: 0, ongoingMonitoring: true }],
      related: [],
    },
    websiteAnalysis: { domain: 'acme.test', status: 'DONE', data: { score: 1 } },
    reopenHistory: [{ stepIds: ['s1'], reason: 'typo', reopenedAt: '2026-01-01T00:00:00Z' }],
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-02T00:00:00Z',
    ...overrides,
  };
}

/** An unsigned JWT-shaped token with the given expiry (seconds since epoch). */
export function fakeJwt(exp: number): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ exp, sub: 'x' })}.sig`;
}

/** What an inbox fake with nothing in it answers to `stats()`. */
export const idleInboxStats = async () => ({ pending: 0, retrying: 0, dead: 0, oldestPendingAt: null, oldestPendingAgeMs: null });
