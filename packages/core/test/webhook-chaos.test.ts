import { Webhook } from 'svix';
import { expect, it } from 'vitest';
import { createWebhookHandler, type IdempotencyStore, MemoryIdempotencyStore } from '../src/index.node.js';
import { SECRET } from './helpers/sign.js';

/** A small seeded PRNG (mulberry32), so a failing run can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DISTINCT = 1000;
const COPIES = 5;
// Leases far longer than any pause this test meets. The store contract keeps each id once only while
// leases outlast the pauses of the process holding them (a paused holder's lease runs out and a copy
// runs onEvent again: the README says so); at 1 s, the event-loop stalls of a loaded machine (over
// 1 s measured with two CPU burners) doubled about a hundred ids a run.
const LEASE_MS = 5_000;
// Svix retries at 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about 1,600 default leases. Compressed
// here, the first retries come fast and then one a second for three leases, so a copy that meets a
// lease left behind by a failed release still has several attempts once it runs out.
const SCHEDULE_MS = [0, 10, 30, 60, 120, 250, 500, 1000, ...Array.from({ length: 15 }, () => 1000)];

it(`chaos: ${DISTINCT * COPIES} deliveries of ${DISTINCT} ids, a store failing 10% and onEvent 5% -> each id handled exactly once`, async () => {
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
  const random = prng(seed);
  const inner = new MemoryIdempotencyStore();
  let storeFailures = 0;
  const chaos = <T>(call: () => Promise<T>): Promise<T> => {
    if (random() < 0.1) {
      storeFailures++;
      return Promise.reject(new Error('store unavailable'));
    }
    return call();
  };
  const store: IdempotencyStore = {
    claim: (id, o) => chaos(() => inner.claim(id, o)),
    complete: (lease) => chaos(() => inner.complete(lease)),
    release: (lease) => chaos(() => inner.release(lease)),
    extend: (lease, o) => chaos(() => inner.extend(lease, o)),
  };

  const handled = new Map<string, number>();
  let handlerFailures = 0;
  const handle = createWebhookHandler({
    // The failures here are the point; the figures below account for every one.
    logger: false,
    secret: SECRET,
    store,
    deadlineMs: 300,
    leaseMs: LEASE_MS,
    onEvent: async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 4)));
      if (random() < 0.05) {
        handlerFailures++;
        throw new Error('handler failed');
      }
      handled.set(ctx.id, (handled.get(ctx.id) ?? 0) + 1);
    },
  });

  const signer = new Webhook(SECRET);
  const messages = Array.from({ length: DISTINCT }, (_, i) => {
    const id = `msg_${seed}_${i}`;
    const body = JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: `biz-${i}`, n: i, note: 'Zoë \u00e9 / \\/' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signer.sign(id, new Date(timestamp * 1000), body);
    return { id, body, headers: { 'svix-id': id, 'svix-timestamp': String(timestamp), 'svix-signature': signature } };
  });

  // The sender's connections: at most this many requests in flight at once, as an HTTP client's
  // pool allows. Unbounded, thousands of deliveries verified in one go block the event loop for
  // seconds on a loaded machine, longer than any lease: a pause the store contract does not cover.
  const CONNECTIONS = 32;
  let open = 0;
  const waiting: Array<() => void> = [];
  const post = async (message: (typeof messages)[number]) => {
    if (open >= CONNECTIONS) await new Promise<void>((resolve) => waiting.push(resolve));
    else open++;
    try {
      return await handle({ method: 'POST', headers: message.headers, body: Buffer.from(message.body) });
    } finally {
      const next = waiting.shift();
      if (next) next();
      else open--;
    }
  };

  let attempts = 0;
  let earlyAcks = 0;
  let givenUp = 0;
  const statuses = new Map<number, number>();
  const started = performance.now();
  /** Each copy the sender gave up on, with every answer it had (`ms since start:status`). */
  const givenUpHistories: string[] = [];
  const deliver = async (message: (typeof messages)[number]): Promise<void> => {
    const history: string[] = [];
    for (const delay of SCHEDULE_MS) {
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      attempts++;
      const response = await post(message);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      history.push(`${Math.round(performance.now() - started)}:${response.status}`);
      if (response.status >= 200 && response.status < 300) {
        // A 2xx tells the sender to stop: the event must already be handled.
        if (!handled.has(message.id)) earlyAcks++;
        return;
      }
    }
    givenUp++;
    givenUpHistories.push(`${message.id} ${history.join(' ')}`);
  };

  // Every id is sent COPIES times: some copies at the same instant, the rest spread over 300 ms.
  await Promise.all(
    messages.flatMap((message) =>
      Array.from({ length: COPIES }, (_, copy) => {
        const startIn = copy < 2 ? 0 : Math.floor(random() * 300);
        return new Promise<void>((resolve) => setTimeout(resolve, startIn)).then(() => deliver(message));
      }),
    ),
  );

  const lost = messages.filter((m) => !handled.has(m.id)).length;
  const duplicates = [...handled.values()].filter((count) => count > 1).length;
  console.log(
    `chaos (seed ${seed}): deliveries=${DISTINCT * COPIES} distinct=${DISTINCT} attempts=${attempts} handled=${handled.size} ` +
      `duplicates=${duplicates} lost=${lost} 2xx-before-handled=${earlyAcks} given-up=${givenUp} store-failures=${storeFailures} ` +
      `handler-failures=${handlerFailures} statuses=${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  expect(storeFailures).toBeGreaterThan(100);
  expect(handlerFailures).toBeGreaterThan(10);
  expect(handled.size).toBe(DISTINCT);
  expect(duplicates).toBe(0);
  expect(lost).toBe(0);
  expect(earlyAcks).toBe(0);
  expect(givenUp, givenUpHistories.join('\n')).toBe(0);
}, 60_000);
