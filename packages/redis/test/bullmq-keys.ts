/**
 * Every name BullMQ gives a key of its own after `<prefix>:<queue>:`, read from the sources of
 * BullMQ 5.81 and 6.7 (`QueueKeys.getKeys`, every `toKey(...)` and every `prefix .. "..."` in its Lua
 * scripts), and the suffixes it adds after a job's key. A job is stored at `<prefix>:<queue>:<jobId>`,
 * so a job id equal to one of these names writes into the queue itself. (BullMQ 6's relay keys live
 * under `<prefix>::relay:`, outside every queue.)
 */
export const BULLMQ_KEY_NAMES = [
  // QueueKeys.getKeys, the same list in 5.81 and 6.7
  'active',
  'wait',
  'waiting-children',
  'paused',
  'id',
  'delayed',
  'prioritized',
  'stalled-check',
  'completed',
  'failed',
  'stalled',
  'repeat',
  'limiter',
  'meta',
  'events',
  'pc',
  'marker',
  'de',
  // toKey(...) and the Lua scripts: a state's name, the old priority set, metrics, repeatable jobs, deduplication
  'waiting',
  'priority',
  'metrics',
  'metrics:completed',
  'metrics:failed',
  'metrics:completed:data',
  'metrics:failed:data',
  'repeat:0123abcd',
  'de:some-dedup-id',
  'dn',
  'dn:some-dedup-id',
  // after a job's key: `<jobId>:lock`, `:logs`, `:dependencies`, `:processed`, `:failed`, `:unsuccessful`
  'lock',
  'logs',
  'dependencies',
  'processed',
  'unsuccessful',
] as const;
