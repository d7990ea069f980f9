import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { Request, RequestHandler, Response } from 'express';
import { sameSecret } from './secret.js';

let exporter: PrometheusExporter | undefined;

/**
 * The Prometheus exporter, the reader of a MeterProvider registered as the global one: verikit finds
 * it there and measures its deliveries, worker runs, inbox and ledger. Once per process (the API
 * takes one global provider), and only when `/metrics` is on: without a provider verikit measures nothing.
 */
export function prometheusExporter(): PrometheusExporter {
  if (exporter === undefined) {
    exporter = new PrometheusExporter({ preventServerStart: true });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
  }
  return exporter;
}

/**
 * `GET /metrics` in Prometheus text, for a scraper that sends `Authorization: Bearer <token>`
 * (`VERIKIT_EXAMPLE_METRICS_TOKEN`); without a token set it is off (404). Its own token, not the
 * operator's secret: a scraper only reads, and a leaked scrape config must not open the operator panel.
 */
export function metricsRoute(token: string | undefined): RequestHandler {
  const text = (res: Response, status: number, body: string) => res.status(status).set('cache-control', 'no-store').type('text').send(body);
  if (token === undefined) return (_req, res) => text(res, 404, 'metrics are off: set VERIKIT_EXAMPLE_METRICS_TOKEN to serve them');
  const exporter = prometheusExporter();
  const bearer = (req: Request) => /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
  return (req, res) => {
    if (!sameSecret(bearer(req), token)) {
      res.set('www-authenticate', 'Bearer realm="metrics"');
      return text(res, 401, 'send the metrics token as Authorization: Bearer <token>');
    }
    exporter.getMetricsRequestHandler(req, res);
  };
}
