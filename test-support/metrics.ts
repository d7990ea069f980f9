import { metrics } from '@opentelemetry/api';
import { type DataPoint, DataPointType, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader the test collects from when it wants (no export timer). */
class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One data point as a test reads it: its attributes and value (a histogram's count, sum and per-bucket counts). */
export interface Point {
  attributes: Record<string, unknown>;
  value: number | { count: number; sum: number; buckets: { boundaries: number[]; counts: number[] } };
  unit: string;
  scope: string;
}

/** Every point of every instrument at one collection, by instrument name. */
export type Collected = Map<string, Point[]>;

/** The global meter provider a test registered, and what it has measured so far. */
export interface MetricsCapture {
  provider: MeterProvider;
  /** Collects now (cumulative: totals since the provider was registered). */
  collect(): Promise<Collected>;
  /** Unregisters and shuts the provider down. */
  stop(): Promise<void>;
}

/**
 * Registers a MeterProvider with an in-memory reader as the global one, as an application's SDK
 * would; `stop()` unregisters it. Only one may be registered at a time (the API's own rule).
 */
export function captureMetrics(): MetricsCapture {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  if (!metrics.setGlobalMeterProvider(provider)) throw new Error('a global meter provider is already registered');
  return {
    provider,
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
      const out: Collected = new Map();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          const points = out.get(metric.descriptor.name) ?? [];
          for (const point of metric.dataPoints as DataPoint<unknown>[]) {
            points.push({
              attributes: { ...point.attributes },
              value: metric.dataPointType === DataPointType.HISTOGRAM ? histogramValue(point.value as Histogram) : (point.value as number),
              unit: metric.descriptor.unit,
              scope: scope.scope.name,
            });
          }
          out.set(metric.descriptor.name, points);
        }
      }
      return out;
    },
    async stop() {
      metrics.disable();
      await provider.shutdown();
    },
  };
}

function histogramValue(value: Histogram): Point['value'] {
  return { count: value.count, sum: value.sum ?? 0, buckets: value.buckets };
}

/** The points of `name` whose attributes include `attributes`. */
export function pointsOf(collected: Collected, name: string, attributes: Record<string, unknown> = {}): Point[] {
  return (collected.get(name) ?? []).filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
}

/** The value of a counter or gauge summed over the points matching `attributes` (0 when none). */
export function sumOf(collected: Collected, name: string, attributes: Record<string, unknown> = {}): number {
  return pointsOf(collected, name, attributes).reduce((total, point) => total + (typeof point.value === 'number' ? point.value : 0), 0);
}

/** How many measurements a histogram took over the points matching `attributes` (0 when none). */
export function countOf(collected: Collected, name: string, attributes: Record<string, unknown> = {}): number {
  return pointsOf(collected, name, attributes).reduce(
    (total, point) => total + (typeof point.value === 'number' ? 0 : point.value.count),
    0,
  );
}

/** A histogram's measurements over the points matching `attributes`: how many, their sum, and the bucket boundaries. */
export function histogramOf(
  collected: Collected,
  name: string,
  attributes: Record<string, unknown> = {},
): { count: number; sum: number; boundaries: number[] } {
  const points = pointsOf(collected, name, attributes).flatMap((point) => (typeof point.value === 'number' ? [] : [point.value]));
  return {
    count: points.reduce((total, value) => total + value.count, 0),
    sum: points.reduce((total, value) => total + value.sum, 0),
    boundaries: points[0]?.buckets.boundaries ?? [],
  };
}
