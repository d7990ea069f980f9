import { ConfigurationError, InvalidArgumentError } from '@verikit/core';
import type { Cluster } from 'ioredis';
import { hashTagOf } from './ledger-keys.js';
import type { RedisClient } from './options.js';

/** Whether `redis` is an ioredis `Cluster` (both majors mark theirs), whose commands go to the node of each key's slot. */
export const isCluster = (redis: RedisClient): redis is Cluster => (redis as { isCluster?: unknown }).isCluster === true;

/**
 * The hash tag that keeps every key of a BullMQ queue (`<prefix>:<queue>:...`) in one Cluster slot,
 * as BullMQ's scripts need. On a Cluster, a prefix and queue name without one are refused at
 * creation: BullMQ would otherwise fail every add with CROSSSLOT, each delivery answered 503.
 * Answers undefined on a single server, where any prefix works.
 */
export function queueHashTag(redis: RedisClient, prefix: string, queueName: string): string | undefined {
  if (!isCluster(redis)) return undefined;
  const tag = hashTagOf(`${prefix}:${queueName}:`);
  if (tag === undefined || tag === '') {
    throw new ConfigurationError(
      'prefix',
      `on a Redis Cluster, the inbox's prefix (or queueName) must hold a non-empty hash tag such as {verikit}, so the whole queue shares one slot; prefix ${JSON.stringify(prefix)} and queueName ${JSON.stringify(queueName)} hold none`,
    );
  }
  return `{${tag}}`;
}

/**
 * A write queued on `ctx.sql` names a key outside the slot of the event's queue: on a Redis Cluster
 * one script cannot reach it. Nothing of the transaction was applied; the attempt fails and is
 * retried, then dead-lettered, until the key holds the queue's hash tag.
 */
export class RedisCrossSlotError extends InvalidArgumentError {
  override name = 'RedisCrossSlotError';
  /** The position (from 1) of the refused command among those `onEvent` queued. */
  readonly position: number;
  /** Its command name (its arguments, which may hold personal data, are not kept). */
  readonly command: string;

  constructor(command: string, position: number, hashTag: string) {
    super(
      `ctx.sql command ${position} (${command}) writes a key outside the slot of the event's queue: on a Redis Cluster, every key written through ctx.sql must hold the queue's hash tag ${hashTag} (e.g. ${hashTag}:results); nothing was applied`,
    );
    this.command = command;
    this.position = position;
  }
}
