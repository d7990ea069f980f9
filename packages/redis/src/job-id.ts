/** Svix's message ids (`msg_` + KSUID): no key BullMQ writes begins with `msg_`, so these serve unchanged. */
const SVIX_ID = /^msg_[A-Za-z0-9_-]+$/;
/** A lone UTF-16 surrogate: UTF-8 turns every one into U+FFFD, so such ids are encoded from their UTF-16 instead. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The BullMQ job id for a delivery id: one-to-one, and never one of the queue's own keys. A job is
 * stored at `<prefix>:<queue>:<jobId>`, beside the queue's `…:meta`, `…:active`, `…:delayed`, …, so a
 * job id equal to one of those names would write into the queue itself. Svix's ids (`msg_…`) stay
 * as they are, readable in dashboards; any other id becomes `~` + the base64url of its UTF-8 (`~~` +
 * of its UTF-16 when it holds a lone surrogate), which is no BullMQ key name, holds no `:` and is no
 * integer (BullMQ refuses both).
 */
export function jobIdFor(id: string): string {
  if (SVIX_ID.test(id)) return id;
  if (LONE_SURROGATE.test(id)) return `~~${Buffer.from(id, 'utf16le').toString('base64url')}`;
  return `~${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** The delivery id a job id stands for: the inverse of {@link jobIdFor}, and the id itself for a job queued by versions up to 0.1. */
export function deliveryIdOf(jobId: string): string {
  if (jobId.startsWith('~~')) return Buffer.from(jobId.slice(2), 'base64url').toString('utf16le');
  if (jobId.startsWith('~')) return Buffer.from(jobId.slice(1), 'base64url').toString('utf8');
  return jobId;
}

/**
 * The job id versions up to 0.1 gave `id` where it differs from {@link jobIdFor}'s, else undefined:
 * they kept every id that was no integer, held no `:` and did not start with `~` (`meta` and `active`
 * included), so a delivery accepted then may be queued under it still.
 */
export function legacyJobIdFor(id: string): string | undefined {
  const keptAsIs = !id.startsWith('~') && !id.includes(':') && `${Number.parseInt(id, 10)}` !== id;
  return keptAsIs && !SVIX_ID.test(id) ? id : undefined;
}
