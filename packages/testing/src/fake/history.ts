/**
 * What one change of a case or session was:
 * - `created`: `POST /kyb/case` or `POST /v2/sessions` (version 1; no webhook),
 * - `status`: the status moved by the control API (`setStatus`) or by the business opening the hosted page,
 * - `submitted`: the person's answer on the hosted page (or `fake.kyb.submit`), with the status it led to,
 * - `reopened`: KYB steps reopened (`fake.kyb.reopen`), back to `IN_PROGRESS`,
 * - `decided`: a reviewer's decision on a case or session that was not final yet,
 * - `overturned`: a reviewer's decision replacing a final one (`APPROVED` -> `REJECTED`, say).
 */
export type FakeChange = 'created' | 'status' | 'submitted' | 'reopened' | 'decided' | 'overturned';

/** One version of a case or session: what the API answered from this change until the next. */
export interface FakeHistoryEntry {
  /** 1 = created, +1 per change. */
  version: number;
  /** The status from this change on. */
  status: string;
  /**
   * The `updatedAt` the API answers with from this change on: strictly increasing per refId, so an
   * observed result maps to exactly one version.
   */
  updatedAt: string;
  change: FakeChange;
  /** The reviewer's reason (`decided`, `overturned`) or the reopen's (`reopened`), when one was given. */
  reason?: string;
}

/**
 * The `updatedAt` of the next change after `history`: now, or 1 ms after the last change when the
 * clock has not moved past it (two changes in one millisecond), so every version has its own.
 */
export function nextUpdatedAt(history: readonly FakeHistoryEntry[]): string {
  const last = history.at(-1);
  const after = last === undefined ? 0 : Date.parse(last.updatedAt) + 1;
  return new Date(Math.max(Date.now(), after)).toISOString();
}

/** The history of something a state file from before histories were kept holds: its current state as version 1. */
export function historySince(status: string, updatedAt: string): FakeHistoryEntry[] {
  return [{ version: 1, status, updatedAt, change: 'created' }];
}
