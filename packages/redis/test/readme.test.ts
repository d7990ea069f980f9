import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { runReadmeSnippet } from '../../../test-support/readme-snippet.js';
import { REDIS_URL, requireService } from '../../../test-support/services.js';

const serverAvailable = await requireService('Redis', REDIS_URL);

it.runIf(serverAvailable)('the README snippet works as written: 204, then the event handled once through ctx.sql', async () => {
  const snippet = runReadmeSnippet(new URL('..', import.meta.url), {
    REDIS_URL,
    VERIKIT_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  });
  const redis = new Redis(REDIS_URL);
  const pid = snippet.child.pid as number;
  try {
    const output = await snippet.waitFor('once', 30_000);
    expect(output).toMatch(/answer 204\n/);
    const id = /handled (msg_\S+) once/.exec(output)?.[1] as string;
    // onEvent prints before it returns; its queued write is applied just after, with "done".
    const deadline = Date.now() + 20_000;
    let result = await redis.hget(`readme:${pid}:results`, id);
    while (result === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      result = await redis.hget(`readme:${pid}:results`, id);
    }
    expect(JSON.parse(result as string)).toEqual({ kind: 'kyb', refId: 'business-42' });
  } finally {
    await snippet.stop();
    const keys = [...(await redis.keys(`{verikit}:readme-${pid}:*`)), `readme:${pid}:results`];
    await redis.del(...keys);
    redis.disconnect();
  }
});
