import {
  armDeadline,
  type BodyLimits,
  type BodyRead,
  type BodyStream,
  Collector,
  isWebStream,
  type NodeReadableLike,
  readWebBody,
} from './read-body.js';

/**
 * Reads a Node-style readable (Node's `IncomingMessage`, Fastify's payload) within the limits, as
 * {@link readWebBody} reads a Web stream. Its own module, so a Worker's bundle, which never sees a
 * Node stream, carries none of it: the adapters for Node frameworks hand it to the route themselves.
 */
export function readNodeBody(stream: NodeReadableLike | null | undefined, limits: BodyLimits): Promise<BodyRead> {
  if (stream === null || stream === undefined) return Promise.resolve({ kind: 'ok', bytes: new Uint8Array(0) });
  if (stream.readableEnded || stream.destroyed) return Promise.resolve({ kind: 'consumed' });
  return new Promise((resolve) => {
    const collector = new Collector(limits.maxBytes);
    let settled = false;
    let deadline: { cancel(): void } | undefined;
    const finish = (read: BodyRead): void => {
      if (settled) return;
      settled = true;
      deadline?.cancel();
      // A stream that ended emits nothing more, so its listeners are left to go with it. One cut
      // short is paused, not destroyed: the answer (413, 408) must still reach the sender.
      if (read.kind !== 'ok') {
        stream.removeListener('data', onData);
        stream.pause();
      }
      resolve(read);
    };
    const onData = (chunk: Uint8Array): void => {
      if (!collector.add(chunk)) finish({ kind: 'too-large' });
    };
    const onFailure = (): void => finish({ kind: 'failed' });
    stream.on('data', onData);
    stream.on('end', () => finish({ kind: 'ok', bytes: collector.bytes() }));
    stream.on('error', onFailure);
    stream.on('close', onFailure);
    // A request whose whole body has arrived and now flows only has it to hand over: nothing left to time. One
    // paused before it came here (req.pause(), a 'readable' listener) emits nothing: that one is timed.
    if (stream.complete !== true || stream.readableFlowing !== true) deadline = armDeadline(limits, () => finish({ kind: 'timeout' }));
  });
}

/** Reads either kind of body stream: the Node build's route reader, where a framework may hand over a Node request. */
export const readAnyBody = (source: BodyStream | null | undefined, limits: BodyLimits): Promise<BodyRead> =>
  source !== null && source !== undefined && !isWebStream(source) ? readNodeBody(source, limits) : readWebBody(source, limits);
