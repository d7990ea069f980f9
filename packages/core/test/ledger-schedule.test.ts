import { describe, expect, it } from 'vitest';
import { resolveSchedule } from '../src/ledger/schedule.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('resolveSchedule', () => {
  const schedule = resolveSchedule({}, () => 0.5);
  const trackedAt = new Date(1_000_000_000_000);
  const t = trackedAt.getTime();
  const next = (ageMs: number, final = false, afterWebhook = false) =>
    schedule.next({ trackedAt, final }, t + ageMs, afterWebhook)?.getTime();

  it('steps through 1, 5, 15 min, 1 h and 6 h of age, then daily while pending', () => {
    expect(schedule.first(trackedAt).getTime()).toBe(t + MIN);
    expect(next(MIN)).toBe(t + 5 * MIN);
    expect(next(5 * MIN)).toBe(t + 15 * MIN);
    expect(next(20 * MIN)).toBe(t + HOUR);
    expect(next(2 * HOUR)).toBe(t + 6 * HOUR);
    expect(next(7 * HOUR)).toBe(t + 7 * HOUR + DAY);
  });

  it('after a webhook, the next check is one step further out', () => {
    expect(next(2 * MIN, false, true)).toBe(t + 15 * MIN);
    expect(next(7 * HOUR, false, true)).toBe(t + 7 * HOUR + 2 * DAY);
  });

  it('re-checks a final verification daily until it is 30 days old, then never', () => {
    expect(next(HOUR, true)).toBe(t + HOUR + DAY);
    expect(next(29 * DAY, true)).toBe(t + 30 * DAY);
    expect(next(30 * DAY, true)).toBeUndefined();
  });

  it('backs off failed checks, doubling to the ceiling, never sooner than a tenth of it', () => {
    const now = t;
    const low = resolveSchedule({ failureBaseMs: 1_000, failureMaxMs: 8_000 }, () => 0);
    expect(low.afterFailure(1, now).getTime() - now).toBe(100);
    expect(low.afterFailure(3, now).getTime() - now).toBe(400);
    expect(low.afterFailure(40, now).getTime() - now).toBe(800);
  });

  it('refuses schedules that are not positive and increasing', () => {
    expect(() => resolveSchedule({ stepsMs: [] })).toThrow(/stepsMs/);
    expect(() => resolveSchedule({ stepsMs: [10, 10] })).toThrow(/stepsMs/);
    expect(() => resolveSchedule({ repeatMs: 0 })).toThrow(/repeatMs/);
  });
});
