/** Which product an event concerns. */
export type EventKind = 'kyb' | 'kyc';

/** What an event is about: the product and your refId. */
export interface EventSubject {
  kind: EventKind;
  refId: string;
}

/** Maps a parsed event to its subject, or `null` when it cannot tell. */
export type IdentifyEvent = (event: unknown) => EventSubject | null;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const firstString = (...values: unknown[]): string | undefined => values.find((v): v is string => typeof v === 'string' && v.length > 0);

/**
 * Best-effort subject of an event. The spec does not show event names or payloads, so this reads
 * the usual places (`type`/`eventType`/`event`, `refId` at the top, under `data`, or under
 * `data.kybCase`/`data.object`) and answers `null` rather than guess; pass `identify` to the
 * handler when your events look different.
 */
export const defaultIdentify: IdentifyEvent = (event) => {
  if (!isRecord(event)) return null;
  const data = isRecord(event.data) ? event.data : {};
  const nested = [data.kybCase, data.object, data.session, data.user].filter(isRecord);
  const refId = firstString(event.refId, event.ref_id, data.refId, data.ref_id, ...nested.map((n) => n.refId));
  if (refId === undefined) return null;
  const name = (firstString(event.type, event.eventType, event.event_type, event.event) ?? '').toLowerCase();
  const hasKybCase = isRecord(data.kybCase) || isRecord(event.kybCase);
  if (/kyb|business/.test(name) || hasKybCase) return { kind: 'kyb', refId };
  if (/kyc|session|user|identity/.test(name)) return { kind: 'kyc', refId };
  return null;
};
