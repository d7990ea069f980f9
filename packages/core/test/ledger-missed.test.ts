import { describe, expect, it } from 'vitest';
import { missedWebhook } from '../src/ledger/ledger.js';

describe('missedWebhook', () => {
  const change = { kind: 'kyb', source: 'reconcile', version: 2, final: false, current: 'IN_REVIEW' } as const;

  it('a change the reconciler found is a missed webhook', () => {
    expect(missedWebhook(change)).toBe(true);
    expect(missedWebhook({ ...change, version: 1, final: true, current: 'COMPLETED' })).toBe(true);
    // A case first seen after it moved: its move was announced by a webhook that never came.
    expect(missedWebhook({ ...change, version: 1, current: 'IN_PROGRESS' })).toBe(true);
  });

  it('a change a webhook led to is none, nor the first sight of a verification that has not moved since it was created', () => {
    expect(missedWebhook({ ...change, source: 'webhook' })).toBe(false);
    expect(missedWebhook({ ...change, version: 1, current: 'NOT_STARTED' })).toBe(false);
    expect(missedWebhook({ kind: 'kyc', source: 'reconcile', version: 1, final: false, current: 'PENDING' })).toBe(false);
  });
});
