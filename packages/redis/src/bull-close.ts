import { EventEmitter } from 'node:events';
import type { Queue, Worker } from 'bullmq';

/**
 * Closes a BullMQ queue or worker, leaving a listener on each of its connections. BullMQ 5 turns a
 * connection's failed opening into an 'error' event, and its close() removes every listener first:
 * closed while Redis is down, the opening fails later (when the client ends) into an event nobody
 * hears, which Node raises as an unhandled rejection and may end the process with. BullMQ 6 checks
 * for a listener itself; there these fields may not exist, and nothing is added.
 */
export async function closeBull(bull: Queue | Worker): Promise<void> {
  await bull.close();
  const { connection, blockingConnection } = bull as unknown as Record<string, unknown>;
  for (const emitter of [connection, blockingConnection]) {
    // The connection is closed: that its opening failed concerns no one any more.
    if (emitter instanceof EventEmitter && emitter.listenerCount('error') === 0) emitter.on('error', () => {});
  }
}
