import {
  ConfigurationError,
  checkLedgerKey,
  type DeadLetter,
  type DeadLetterQuery,
  defaultIdentify,
  type EventSubject,
  type IdentifyEvent,
  type InboxAdmin,
  type InboxEraseResult,
  type InboxEventState,
  type InboxRecord,
  InvalidArgumentError,
  PayloadSealError,
  type ResealResult,
} from '@verikit/core';
import { type Bound, runBounded } from './bounded.js';
import { timestamp, wholeCount } from './db.js';
import { type StoredPayloads, unlessSealed } from './payloads.js';
import { inBatches } from './pruner.js';
import { purgeDeadSql } from './retention.js';

/** Where the inbox's rows are, and how its bodies are kept. */
export interface InboxAdminSetup {
  bound: Bound;
  /** The inbox table, schema-qualified. */
  table: string;
  /** The channel a replay notifies, so a waiting worker takes it at once. */
  channel: string;
  payloads: StoredPayloads;
  /** Rows per purge batch. */
  batchSize: number;
}

/**
 * Ids read per page by `erase` and `reseal`: each statement reads this many rows whatever share
 * of them still has a body, so none runs long on a table of bodies long removed, and at most this
 * many bodies are in memory at once.
 */
const PAGE = 500;

const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : new Date(value as string | Date));

/** Whether `body` (JSON text) is about `subject`, as `identify` reads it. */
function isAbout(body: string, subject: EventSubject, identify: IdentifyEvent): boolean {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    return false;
  }
  const about = identify(event);
  return about?.kind === subject.kind && about.refId === subject.refId;
}

/** The operator's side of the PostgreSQL inbox: look at one event, page and purge dead letters, erase, re-seal. */
export function createInboxAdmin({ bound, table, channel, payloads, batchSize }: InboxAdminSetup): InboxAdmin {
  const getSql = `SELECT id, state, attempts, last_error, received_at, finished_at, payload IS NOT NULL AS kept,
  CASE WHEN $2::boolean THEN payload END AS payload
FROM ${table} WHERE id = $1`;
  // After the event `after` in (received_at, id) order; the event itself may have left the dead letters since (replayed).
  const deadLettersSql = `SELECT id, attempts, last_error, received_at FROM ${table}
WHERE state = 'dead' AND received_at >= coalesce($2::timestamptz, '-infinity')
  AND ($3::text IS NULL OR (received_at, id) > (SELECT received_at, id FROM ${table} WHERE id = $3))
ORDER BY received_at, id LIMIT $1`;
  const replaySql = `WITH again AS (
  UPDATE ${table} SET state = 'pending', attempts = 0, next_run_at = now(), last_error = NULL, finished_at = NULL, owner = NULL, leased_until = NULL
  WHERE id = $1 AND state = 'dead' RETURNING id
), woken AS (SELECT pg_notify($2, '') FROM again)
SELECT (SELECT count(*) FROM again)::int AS replayed, (SELECT count(*) FROM woken)::int AS woken`;
  // A page of ids after $1, with the bodies of those that still have one; the summary row comes even when none has.
  const pageSql = `WITH page AS (SELECT id, payload FROM ${table} WHERE id > $1 ORDER BY id LIMIT $2),
summary AS (SELECT max(id) AS last_id, count(*)::int AS scanned FROM page)
SELECT summary.last_id, summary.scanned, page.id, page.payload FROM summary LEFT JOIN page ON page.payload IS NOT NULL`;
  // An erased event never runs: pending and dead ones become done (the id kept, for dedupe); a worker holding one finds its lease gone.
  const eraseSql = `UPDATE ${table} SET payload = NULL, state = 'done', next_run_at = NULL, leased_until = NULL,
  owner = CASE WHEN state = 'done' THEN owner END, finished_at = CASE WHEN state = 'done' THEN finished_at ELSE now() END
WHERE id IN (SELECT json_array_elements_text($1::json)) AND payload IS NOT NULL
RETURNING 1`;
  // Only where the row still holds what was read: a body erased or re-sealed meanwhile is not overwritten.
  const resealSql = `UPDATE ${table} AS t SET payload = v.sealed
FROM json_to_recordset($1::json) AS v(id text, read text, sealed text)
WHERE t.id = v.id AND t.payload = v.read
RETURNING 1`;

  /** Every stored body, a page at a time, in id order: each row is read once, whatever state it moves to meanwhile. */
  async function* kept(what: string): AsyncGenerator<Array<{ id: string; payload: string }>> {
    let after = '';
    for (;;) {
      const { rows } = await runBounded(bound, what, (q) => q.query(pageSql, [after, PAGE]));
      const summary = rows[0];
      if (summary === undefined || summary.last_id === null) return;
      yield rows.filter((row) => row.id !== null).map((row) => ({ id: String(row.id), payload: String(row.payload) }));
      if (Number(summary.scanned) < PAGE) return;
      after = String(summary.last_id);
    }
  }

  const get = async (id: string, { withPayload = false } = {}): Promise<InboxRecord | undefined> => {
    const { rows } = await runBounded(bound, 'reading an event', (q) => q.query(getSql, [String(id), withPayload === true]));
    const row = rows[0];
    if (row === undefined) return undefined;
    const record: InboxRecord = {
      id: String(row.id),
      state: row.state as InboxEventState,
      attempts: Number(row.attempts),
      lastError: row.last_error === null ? null : String(row.last_error),
      receivedAt: new Date(row.received_at as string | Date),
      finishedAt: dateOrNull(row.finished_at),
      payload: row.kept === true ? 'kept' : 'removed',
    };
    if (row.payload !== null && row.payload !== undefined) record.body = await payloads.open(String(row.payload), record.id);
    return record;
  };

  return {
    get,
    async deadLetters({ limit = 100, since, after }: DeadLetterQuery = {}): Promise<DeadLetter[]> {
      if (after !== undefined && typeof after !== 'string') throw new InvalidArgumentError('after must be the id of a dead letter');
      const params = [wholeCount(limit, 'limit', 0), since === undefined ? null : timestamp(since, 'since', false), after ?? null];
      const { rows } = await runBounded(bound, 'listing dead letters', (q) => q.query(deadLettersSql, params));
      // An unknown `after` (a typo, a pruned id) would read as the end of the list.
      if (rows.length === 0 && after !== undefined && (await get(after)) === undefined)
        throw new InvalidArgumentError(`after names no event this inbox keeps: ${JSON.stringify(after)}`);
      return rows.map((row) => ({
        id: String(row.id),
        attempts: Number(row.attempts),
        lastError: row.last_error === null ? null : String(row.last_error),
        receivedAt: new Date(row.received_at as string | Date),
      }));
    },
    async replay(id: string): Promise<boolean> {
      const { rows } = await runBounded(bound, 'a replay', (q) => q.query(replaySql, [id, channel]));
      return Number(rows[0]?.replayed ?? 0) > 0;
    },
    async purgeDead({ before }: { before: Date }): Promise<number> {
      const cutoff = timestamp(before, 'before', false);
      return inBatches(bound, 'purging dead letters', purgeDeadSql(table, 'received_at < $2::timestamptz'), {
        batchSize,
        params: [cutoff],
      });
    },
    async erase(subject: EventSubject, { identify = defaultIdentify }: { identify?: IdentifyEvent } = {}): Promise<InboxEraseResult> {
      const about = checkLedgerKey(subject);
      let erased = 0;
      let shut: PayloadSealError | undefined;
      for await (const page of kept('reading bodies to erase')) {
        const ids: string[] = [];
        for (const { id, payload } of page) {
          const body = await unlessSealed(() => payloads.open(payload, id));
          if (body instanceof PayloadSealError) shut ??= body;
          else if (isAbout(body, about, identify)) ids.push(id);
        }
        if (ids.length === 0) continue;
        const { rows } = await runBounded(bound, 'erasing bodies', (q) => q.query(eraseSql, [JSON.stringify(ids)]));
        erased += rows.length;
      }
      // A body that would not open may be about the subject: never report an erasure that may be incomplete.
      if (shut !== undefined) throw shut;
      return { erased };
    },
    async reseal({ onProgress }: { onProgress?: (resealed: number) => void } = {}): Promise<ResealResult> {
      const { sealer } = payloads;
      if (sealer === undefined)
        throw new ConfigurationError(
          'encryption',
          'reseal needs the encryption option: the keys to seal with (the current one first) and to open with',
        );
      let resealed = 0;
      let shut: PayloadSealError | undefined;
      for await (const page of kept('reading bodies to re-seal')) {
        const changes: Array<{ id: string; read: string; sealed: string }> = [];
        for (const { id, payload } of page) {
          if (!sealer.needsReseal(payload)) continue;
          const body = await unlessSealed(() => sealer.open(payload, id));
          if (body instanceof PayloadSealError) shut ??= body;
          else changes.push({ id, read: payload, sealed: await sealer.seal(body, id) });
        }
        if (changes.length === 0) continue;
        const { rows } = await runBounded(bound, 're-sealing bodies', (q) => q.query(resealSql, [JSON.stringify(changes)]));
        resealed += rows.length;
        onProgress?.(resealed);
      }
      // The ones left under a key that is not given stay as they are, to be re-sealed once it is.
      if (shut !== undefined) throw shut;
      return { resealed };
    },
  };
}
