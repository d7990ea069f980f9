// The KYC status classifier needs no schema: kept apart from kyc.ts so the client's options load no zod.
import { ConfigurationError } from '../errors.js';

/** How a KYC status string reads to your application. */
export type KycDecision = 'approved' | 'rejected' | 'pending';

/** Options of {@link createKycStatusClassifier}. */
export interface KycStatusClassifierOptions {
  /** Statuses that mean approved (exact strings). */
  approved?: readonly string[];
  /** Statuses that mean rejected (exact strings). */
  rejected?: readonly string[];
}

/**
 * A classifier from KYC status strings to decisions. The spec lists no KYC statuses, so anything
 * not configured is `pending`: never approve on a guess.
 * @example
 * const classify = createKycStatusClassifier({ approved: ['APPROVED'], rejected: ['DECLINED'] });
 * classify('APPROVED'); // 'approved'
 * classify('SOMETHING_NEW'); // 'pending'
 */
export function createKycStatusClassifier(options: KycStatusClassifierOptions = {}): (status: string) => KycDecision {
  const approved = new Set(options.approved ?? []);
  const rejected = new Set(options.rejected ?? []);
  for (const status of approved) {
    if (rejected.has(status)) throw new ConfigurationError('kycStatuses', `KYC status "${status}" cannot be both approved and rejected`);
  }
  return (status) => (approved.has(status) ? 'approved' : rejected.has(status) ? 'rejected' : 'pending');
}
