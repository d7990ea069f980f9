// Verify benchmark: our verifier vs svix's Webhook.verify vs a bare HMAC-SHA256 over the same bytes.
import { createHmac } from 'node:crypto';
import { createWebhookVerifier } from '@verikit/core';
import { Webhook } from 'svix';
import { fmt, median, report } from './lib.mjs';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A JSON body of exactly `bytes` bytes. */
function bodyOf(bytes) {
  const event = { type: 'kyb.case.status_changed', data: { refId: 'biz-1', status: 'COMPLETED', pad: '' } };
  event.data.pad = 'x'.repeat(bytes - JSON.stringify(event).length);
  return JSON.stringify(event);
}

/** Operations per second of `op` (sync or async) over `durationMs`. */
async function rate(op, durationMs) {
  let count = 0;
  const started = performance.now();
  const stopAt = started + durationMs;
  while (performance.now() < stopAt) {
    for (let i = 0; i < 200; i++) await op();
    count += 200;
  }
  return count / ((performance.now() - started) / 1000);
}

/** Runs the verify benchmark for 2 KiB and 20 KiB bodies. */
export async function benchVerify({ durationMs = 700, rounds = 5, verbose = false } = {}) {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const results = {};
  for (const size of [2048, 20480]) {
    const body = bodyOf(size);
    const bytes = Buffer.from(body);
    const id = 'msg_2LxBench';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'svix-id': id,
      'svix-timestamp': String(timestamp),
      'svix-signature': new Webhook(SECRET).sign(id, new Date(timestamp * 1000), body),
    };
    const ours = createWebhookVerifier({ secrets: SECRET });
    const svix = new Webhook(SECRET);
    await ours.verify(headers, bytes); // must accept, or the figures mean nothing
    svix.verify(body, headers);
    const candidates = {
      'verikit verify': () => ours.verify(headers, bytes),
      // svix's verify also parses the JSON; this line is the like-for-like comparison.
      'verikit + JSON.parse': async () => {
        await ours.verify(headers, bytes);
        return JSON.parse(body);
      },
      'svix Webhook.verify': () => svix.verify(body, headers),
      'bare createHmac': () => createHmac('sha256', key).update(`${id}.${timestamp}.`).update(bytes).digest(),
    };
    const rates = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
    for (const op of Object.values(candidates)) await rate(op, 200);
    for (let round = 0; round < rounds; round++) {
      for (const [name, op] of Object.entries(candidates)) rates[name].push(await rate(op, durationMs));
      if (verbose)
        console.log(
          `    ${size} B round ${round + 1}: ${Object.entries(rates)
            .map(([n, r]) => `${n} ${fmt(r.at(-1))}`)
            .join(', ')}`,
        );
    }
    const m = Object.fromEntries(Object.entries(rates).map(([name, list]) => [name, median(list)]));
    results[size] = m;
    console.log(`verify, ${size / 1024} KiB body (median of ${rounds} x ${durationMs} ms):`);
    const prefix = `verify/${size / 1024}KiB`;
    for (const [name, value] of Object.entries(m)) {
      report({ name: `${prefix}/${name.replaceAll(' ', '-')}`, label: name.padEnd(20), value, unit: 'ops/s' });
    }
    report({
      name: `${prefix}/verikit-vs-svix`,
      label: 'verikit / svix      ',
      value: m['verikit verify'] / m['svix Webhook.verify'],
      unit: 'x',
      ...(size === 2048 ? { bar: { min: 4 } } : {}),
    });
    report({
      name: `${prefix}/verikit-vs-bare-hmac`,
      label: 'verikit / bare HMAC ',
      value: m['verikit verify'] / m['bare createHmac'],
      unit: 'x',
      bar: { min: 0.5 },
    });
    // Both parse the body: the like-for-like comparison.
    report({
      name: `${prefix}/verikit-parse-vs-svix`,
      label: 'verikit+parse / svix',
      value: m['verikit + JSON.parse'] / m['svix Webhook.verify'],
      unit: 'x',
    });
  }
  return results;
}
