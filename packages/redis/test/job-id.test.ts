import { QueueKeys } from 'bullmq';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryIdOf, jobIdFor } from '../src/job-id.js';
import { BULLMQ_KEY_NAMES } from './bullmq-keys.js';

/** What BullMQ refuses as a custom job id (5.81 and 6.7 alike). */
const refusedByBullMQ = (jobId: string) => `${Number.parseInt(jobId, 10)}` === jobId || jobId.includes(':');

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
/** Any id: Unicode text, raw UTF-16 (lone surrogates too), Svix-like ids, BullMQ's key names, and ids made to look like job ids. */
const anyId = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1 }),
  fc.string({ unit: codeUnit, minLength: 1 }),
  fc.stringMatching(/^msg_[A-Za-z0-9_-]{0,30}$/),
  fc.constantFrom(...BULLMQ_KEY_NAMES),
  fc.string({ unit: 'binary', minLength: 1 }).map((id) => jobIdFor(id)),
  fc.string({ minLength: 0 }).map((tail) => `~${tail}`),
  fc.string({ minLength: 0 }).map((tail) => `~~${tail}`),
);

describe('job ids: one per delivery id, never a key of the queue itself', () => {
  it("the list of BullMQ's key names holds every key the installed BullMQ names", () => {
    const prefix = 'p:q:';
    const names = Object.values(new QueueKeys('p').getKeys('q')).map((key) => key.slice(prefix.length));
    expect(BULLMQ_KEY_NAMES).toEqual(expect.arrayContaining(names.filter((name) => name !== '')));
  });

  it("no delivery id, BullMQ's key names included, maps to one of those names, to an id BullMQ refuses, or to another's job id", () => {
    const reserved = new Set<string>(BULLMQ_KEY_NAMES);
    fc.assert(
      fc.property(anyId, (id) => {
        const jobId = jobIdFor(id);
        expect(reserved.has(jobId)).toBe(false);
        expect(refusedByBullMQ(jobId)).toBe(false);
        expect(deliveryIdOf(jobId)).toBe(id);
      }),
      { numRuns: 5_000 },
    );
    for (const name of BULLMQ_KEY_NAMES) expect(reserved.has(jobIdFor(name))).toBe(false);
  });

  it('ids that differ only by the escaping get different job ids', () => {
    const lookalikes = [
      'meta',
      jobIdFor('meta'),
      jobIdFor(jobIdFor('meta')),
      `~${jobIdFor('meta')}`,
      '~~bQBlAHQAYQA',
      jobIdFor('\uD800'),
      '\uD800',
      '\uDC00',
      '\uFFFD',
      'msg_abc',
      '~msg_abc',
      jobIdFor('msg_abc:'),
      'msg_abc:',
      '12345',
      jobIdFor('12345'),
    ];
    expect(new Set(lookalikes).size).toBe(lookalikes.length);
    expect(new Set(lookalikes.map(jobIdFor)).size).toBe(lookalikes.length);
  });

  it("Svix's own ids stay readable: the job id is the svix-id", () => {
    for (const id of ['msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 'msg_p5jXN8AQM9LWM0D4loKWxJek']) expect(jobIdFor(id)).toBe(id);
  });
});
