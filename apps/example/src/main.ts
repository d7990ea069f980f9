// `pnpm start`: the example app, against the embedded fake service unless VERIKIT_* are set.
import { ExampleConfigError } from './config.js';
import { startExample } from './start.js';

const port = Number(process.env.PORT ?? 3000);
try {
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ExampleConfigError(`PORT must be a port number, not ${JSON.stringify(process.env.PORT)}`);
  const example = await startExample({ port, env: process.env });
  console.log(
    example.mode === 'embedded'
      ? `verikit example running against the embedded fake service (no account, no secrets, no internet):\n  ${example.url}`
      : `verikit example running against the real service from VERIKIT_*:\n  ${example.url}`,
  );
  console.log(`  data: ${example.storage} (kept across restarts)`);
  if (example.fake) console.log(`  reviewer console (decide, reopen, overturn, webhooks off and on): ${example.fake.reviewerUrl}`);
  console.log(
    example.operatorPanel === 'on'
      ? `  operator panel: ${example.url}/operations (sign in with VERIKIT_EXAMPLE_OPERATOR_SECRET)`
      : '  operator panel: off (set VERIKIT_EXAMPLE_OPERATOR_SECRET, 16 characters or more, to turn it on)',
  );
  console.log(
    example.metrics === 'on'
      ? `  metrics: ${example.url}/metrics (Prometheus text; send Authorization: Bearer $VERIKIT_EXAMPLE_METRICS_TOKEN)`
      : '  metrics: off (set VERIKIT_EXAMPLE_METRICS_TOKEN, 16 characters or more, to serve /metrics)',
  );
  const stop = () => {
    example.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof ExampleConfigError) console.error(`verikit example: ${error.message}`);
  else if (code === 'EADDRINUSE')
    console.error(`verikit example: port ${port} is in use; set PORT to another one (PORT=0 picks a free port)`);
  else console.error(`verikit example: could not start: ${(error as Error).message}`);
  process.exit(1);
}
