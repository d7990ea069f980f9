import { expect, it } from 'vitest';
import { runReadmeSnippet } from '../../../test-support/readme-snippet.js';

it('the README snippet works as written (PGlite, in memory)', async () => {
  const snippet = runReadmeSnippet(new URL('..', import.meta.url), { VERIKIT_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
  try {
    expect(await snippet.waitFor('store ready', 30_000)).toContain('store ready');
  } finally {
    await snippet.stop();
  }
});
