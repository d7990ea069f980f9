import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import * as webBuild from '../src/index.default.js';
import type { WebhookBodySource, WebhookRoute } from '../src/index.node.js';
import * as nodeBuild from '../src/index.node.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';

/** A Node readable that delivers `body` in two chunks, as a Node request would. */
function nodeStream(body: string): PassThrough {
  const stream = new PassThrough();
  setImmediate(() => {
    stream.write(body.slice(0, 10));
    stream.end(body.slice(10));
  });
  return stream;
}

type Build = typeof webBuild | typeof nodeBuild;

/** Hands `body` to a fresh webhook route of `build` as a signed delivery; resolves to the answer and the ids onEvent saw. */
async function deliver(build: Build, id: string, body: WebhookBodySource, maxBodyBytes?: number) {
  const seen: string[] = [];
  const routes = build.createVerikitRoutes({
    webhook: {
      secret: SECRET,
      store: new build.MemoryIdempotencyStore(),
      maxBodyBytes,
      onEvent: (ctx) => {
        seen.push(ctx.id);
      },
    },
  });
  const answer = await (routes.webhook as WebhookRoute).receive({ method: 'POST', headers: svixHeaders(BODY, { id }), body });
  return { status: answer.status, seen };
}

describe('how the webhook route reads a body stream on each build', () => {
  it('the Web build reads a Node readable handed over with read: readNodeBody (Express or Fastify on Bun and Deno)', async () => {
    const body = { kind: 'stream', stream: nodeStream(BODY), read: webBuild.readNodeBody } as const;
    expect(await deliver(webBuild, 'msg_web_node', body)).toEqual({ status: 204, seen: ['msg_web_node'] });
  });

  it('the Web build refuses a bare Node readable with a ConfigurationError naming the reader', async () => {
    const received = deliver(webBuild, 'msg_web_bare', { kind: 'stream', stream: nodeStream(BODY) });
    await expect(received).rejects.toBeInstanceOf(webBuild.ConfigurationError);
    await expect(received).rejects.toMatchObject({
      code: 'invalid_config',
      option: 'body',
      message: expect.stringContaining('readNodeBody'),
    });
  });

  it('the Node build reads a bare Node readable (a node:http request, Hono on Node)', async () => {
    const body = { kind: 'stream', stream: nodeStream(BODY) } as const;
    expect(await deliver(nodeBuild, 'msg_node_bare', body)).toEqual({ status: 204, seen: ['msg_node_bare'] });
  });

  it.each([
    ['Web', webBuild],
    ['Node', nodeBuild],
  ] as const)('a Node readable over maxBodyBytes is 413 on the %s build, read through readNodeBody', async (_name, build) => {
    const body = { kind: 'stream', stream: nodeStream(BODY), read: build.readNodeBody } as const;
    expect(await deliver(build, 'msg_large', body, 32)).toEqual({ status: 413, seen: [] });
  });

  it('a Web stream is read on the Web build as before', async () => {
    const body = { kind: 'stream', stream: new Response(BODY).body } as const;
    expect(await deliver(webBuild, 'msg_web_stream', body)).toEqual({ status: 204, seen: ['msg_web_stream'] });
  });
});

describe('readNodeBody and its deadline', () => {
  /** Deadlines that fire only when told to, counting those armed. */
  function manualDeadlines() {
    const armed: Array<() => void> = [];
    const arm = (onExpire: () => void) => {
      armed.push(onExpire);
      return { cancel: () => {} };
    };
    return { armed, deadlines: { arm } };
  }

  it('arms no deadline for a request whose whole body has arrived (IncomingMessage.complete), and reads it', async () => {
    const { armed, deadlines } = manualDeadlines();
    const stream = Object.assign(new PassThrough(), { complete: true });
    stream.end(BODY);
    const read = await nodeBuild.readNodeBody(stream, { maxBytes: 1_000, timeoutMs: 10, deadlines });
    expect(read.kind === 'ok' && Buffer.from(read.bytes).toString()).toBe(BODY);
    expect(armed).toHaveLength(0);
  });

  it('a request whose body has arrived but that was paused before (it emits nothing) is still timed', async () => {
    const { armed, deadlines } = manualDeadlines();
    const stream = Object.assign(new PassThrough(), { complete: true });
    stream.end(BODY);
    stream.pause();
    const reading = nodeBuild.readNodeBody(stream, { maxBytes: 1_000, timeoutMs: 10, deadlines });
    expect(armed).toHaveLength(1);
    armed[0]?.();
    expect(await reading).toEqual({ kind: 'timeout' });
  });

  it('a body still arriving is timed: past its deadline the read ends as a timeout, its stream paused', async () => {
    const { armed, deadlines } = manualDeadlines();
    const stream = Object.assign(new PassThrough(), { complete: false });
    stream.write(BODY.slice(0, 10));
    const reading = nodeBuild.readNodeBody(stream, { maxBytes: 1_000, timeoutMs: 10, deadlines });
    expect(armed).toHaveLength(1);
    armed[0]?.();
    expect(await reading).toEqual({ kind: 'timeout' });
    expect(stream.isPaused()).toBe(true);
  });
});
