import type { KybCaseDetails } from '../schemas/kyb.js';
import { isFinal } from '../schemas/kyb-values.js';
import type { KycResult } from '../schemas/kyc.js';
import type { KycDecision } from '../schemas/kyc-values.js';
import type { Observation } from './ledger.js';

/** The authoritative result of a verification, by kind. */
export type VerificationResult = { kind: 'kyb'; result: KybCaseDetails } | { kind: 'kyc'; result: KycResult };

/** Maps a result to the string that changes when the verification does (default: see {@link defaultFingerprint}). */
export type Fingerprint = (read: VerificationResult) => string;

const MAX_FINGERPRINT_LENGTH = 1_024;

/**
 * What a change is, by default: the status, `updatedAt` when the service sends it, and for KYB the
 * number of reopens and the risk flag. Not the whole result: it holds short-lived signed URLs and
 * fields the spec does not show, which would read as a change on every fetch.
 */
export const defaultFingerprint: Fingerprint = (read) => {
  const updatedAt = (read.result as { updatedAt?: unknown }).updatedAt;
  const at = typeof updatedAt === 'string' ? updatedAt : null;
  if (read.kind === 'kyc') return JSON.stringify([read.result.status, at]);
  const reopens = Array.isArray(read.result.reopenHistory) ? read.result.reopenHistory.length : 0;
  return JSON.stringify([read.result.status, at, reopens, read.result.flagType ?? null]);
};

/** The observation of a result: its status, whether final, its fingerprint. */
export function observationOf(
  read: VerificationResult,
  fingerprint: Fingerprint,
  classifyKyc: (status: string) => KycDecision,
): Observation {
  const print = fingerprint(read);
  if (typeof print !== 'string' || print.length === 0 || print.length > MAX_FINGERPRINT_LENGTH)
    throw new TypeError(`a ledger fingerprint must be a non-empty string of at most ${MAX_FINGERPRINT_LENGTH} characters`);
  const status = read.result.status;
  const final = read.kind === 'kyb' ? isFinal(status) : classifyKyc(status) !== 'pending';
  return { status, final, fingerprint: print };
}
