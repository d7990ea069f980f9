// verikit's metrics for Prometheus: an OpenTelemetry MeterProvider with the Prometheus exporter,
// registered globally; verikit finds it by itself. Prometheus scrapes METRICS_PORT/metrics.
import { PGlite } from '@electric-sql/pglite';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { clientFromEnv, createInboxWorker, createReconciler } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import express from 'express';

// Its own port, away from the app's: the figures are for your monitoring, not the internet.
const exporter = new PrometheusExporter({ host: '127.0.0.1', port: Number(process.env.METRICS_PORT ?? 9464) });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));

const db = new PGlite(); // a pg Pool in production
const inbox = createPostgresInbox({ db });
const ledger = createPostgresLedger({ db });
await inbox.migrate();
await ledger.migrate();

const client = clientFromEnv();
const ledgerOptions = {
  ledger,
  client,
  onChange: (ctx) => console.log(`verification update: ${ctx.kind} ${ctx.refId} -> ${ctx.current} (${ctx.source})`),
};
// The worker reports the inbox's depth and the reconciler the ledger's, while they run.
const worker = createInboxWorker({ inbox, ...ledgerOptions });
const reconciler = createReconciler(ledgerOptions);
worker.start();
reconciler.start();

const app = express();
app.use('/verikit', verikitRouter({ webhook: { secret: process.env.VERIKIT_WEBHOOK_SECRET, inbox } }));
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));

process.on('SIGTERM', async () => {
  server.close();
  await Promise.all([worker.stop(), reconciler.stop()]);
  await exporter.shutdown();
  await inbox.close();
  await db.close();
  process.exit(0);
});
