import { withTimeout } from '../store/timeout.js';
import type { OtelBatchResult, OtelMeter, OtelObservable } from './api.js';
import type { MeterSource } from './meter.js';

/** How long one stats read serves the gauges: however often they are scraped, an engine is read at most this often. */
export const STATS_MAX_AGE_MS = 5_000;
/** The longest a stats read may take at a collection; past it (or on a failure) that engine reports nothing this time. */
export const STATS_TIMEOUT_MS = 2_000;

/** An engine whose figures gauges report. */
export interface StatsEngine<Stats> {
  stats(): Promise<Stats>;
}

/** One read of an engine's stats, and when it ended (`performance.now()`). */
interface StatsRead<Stats> {
  stats: Stats;
  at: number;
}

/** Gauges made on a meter, and how one engine's figures are observed on them (`sinceReadMs`: the read's age). */
export type GaugeSet<Stats, Extra> = (meter: OtelMeter) => {
  gauges: OtelObservable[];
  observe(result: OtelBatchResult, stats: Stats, sinceReadMs: number, extra: Extra): void;
};

/** An engine's stats, read at most once per {@link STATS_MAX_AGE_MS}, bounded, one read at a time. */
class CachedStats<Stats> {
  private last: StatsRead<Stats> | undefined;
  private reading: Promise<StatsRead<Stats> | undefined> | undefined;

  constructor(private readonly engine: StatsEngine<Stats>) {}

  get(): Promise<StatsRead<Stats> | undefined> {
    const last = this.last;
    if (last !== undefined && performance.now() - last.at < STATS_MAX_AGE_MS) return Promise.resolve(last);
    this.reading ??= withTimeout(
      Promise.resolve().then(() => this.engine.stats()),
      STATS_TIMEOUT_MS,
      'a stats read for the metrics',
    )
      .then(
        (stats) => {
          this.last = { stats, at: performance.now() };
          return this.last;
        },
        // Nothing reported this time rather than a stale figure; the health check says why.
        () => undefined,
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}

/** One component's watch of an engine: kept on the meter in use until stopped. */
export interface Watching {
  /** Looks for a meter provider registered or replaced since, and moves the gauges to it: call it as the component polls. */
  refresh(): void;
  /** Stops reporting the engine once no other component watches it. */
  stop(): void;
}

/** Engines a set of gauges reports on. */
export interface StatsGauges<Stats, Extra> {
  /**
   * Reports `engine` on the gauges until stopped. Watched again (by several workers, say), it is
   * still read and reported once; `extra` is the first watcher's.
   */
  watch(engine: StatsEngine<Stats>, extra: Extra): Watching;
}

/** A registry of engines whose stats `gaugeSet` reports: one batch callback on the meter while any is watched. */
export function statsGauges<Stats, Extra>(source: MeterSource, gaugeSet: GaugeSet<Stats, Extra>): StatsGauges<Stats, Extra> {
  const watched = new Map<StatsEngine<Stats>, { watchers: number; cache: CachedStats<Stats>; extra: Extra }>();
  let attachedTo: OtelMeter | undefined;
  let detach: (() => void) | undefined;
  const attach = (meter: OtelMeter) => {
    const { gauges, observe } = gaugeSet(meter);
    const callback = async (result: OtelBatchResult) => {
      await Promise.all(
        [...watched.values()].map(async ({ cache, extra }) => {
          const read = await cache.get();
          if (read !== undefined) observe(result, read.stats, performance.now() - read.at, extra);
        }),
      );
    };
    meter.addBatchObservableCallback(callback, gauges);
    return () => meter.removeBatchObservableCallback(callback, gauges);
  };
  /** The callback on the meter in use while anything is watched, and on none otherwise. */
  const refresh = () => {
    const meter = watched.size === 0 ? undefined : source.meter();
    if (meter === attachedTo) return;
    detach?.();
    attachedTo = meter;
    detach = meter && attach(meter);
  };
  return {
    watch(engine, extra) {
      let entry = watched.get(engine);
      if (entry === undefined) {
        entry = { watchers: 0, cache: new CachedStats(engine), extra };
        watched.set(engine, entry);
      }
      entry.watchers++;
      refresh();
      let stopped = false;
      const watcher = entry;
      return {
        refresh,
        stop() {
          if (stopped) return;
          stopped = true;
          if (--watcher.watchers === 0) watched.delete(engine);
          refresh();
        },
      };
    },
  };
}

/** The registry `make` builds for `source`, one per source: every component of a process shares it. */
export function sharedPerSource<T>(make: (source: MeterSource) => T): (source: MeterSource) => T {
  const made = new WeakMap<MeterSource, T>();
  return (source) => {
    let value = made.get(source);
    if (value === undefined) {
      value = make(source);
      made.set(source, value);
    }
    return value;
  };
}
