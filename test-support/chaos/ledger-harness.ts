import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createClient, type EventKind, type LedgerEngine, type ReconcileScheduleOptions } from '@verikit/core';
import { createFakeService, type FakeHistoryEntry, type FakeService } from '@verikit/testing';
import { Agent, request } from 'undici';
import { type ChaosInstance, startChaosInstance } from './harness.js';

/** The instance script every engine runs (its first argument names the engine). */
const INSTANCE = fileURLToPath(new URL('./ledger-instance.mjs', import.meta.url));
const FRAMEWORKS = ['express', 'fastify', 'hono'] as const;

/** One row `onChange` wrote through `ctx.sql` (no unique key: a doubled reaction shows as two rows). */
export interface LedgerEffect {
  kind: EventKind;
  refId: string;
  version: number;
  status: string;
  final: boolean;
  source: 'webhook' | 'reconcile';
  /** The result's `updatedAt`: which version of the fake's history the change was read from. */
  updatedAt: string;
  /** The instance process that wrote it. */
  pid: number;
}

/** What the harness needs of an engine. */
export interface LedgerChaosEngine {
  /** `postgres` or `redis`: what ledger-instance.mjs opens. */
  name: 'postgres' | 'redis';
  /** The engine's URL, for the instances. */
  url: string;
  /** The run's schema (PostgreSQL) or key prefix with its hash tag (Redis), migrated and empty. */
  namespace: string;
  /** The same ledger in the test process: the client tracks each refId in it before creating it, and the verdict reads it. */
  ledger: LedgerEngine;
  /** Every effect row written so far. */
  effects(): Promise<LedgerEffect[]>;
}

/** Options of a run. */
export interface LedgerChaosOptions {
  /** RefIds, half KYB cases, half KYC sessions. */
  refIds: number;
  /** Transitions per refId, drawn from [min, max]. */
  transitions: { min: number; max: number };
  instances: number;
  /** SIGKILL + restart of one instance, this many times, spread over the drive. */
  kills: number;
  /** How long the transitions are spread over. */
  driveMs: number;
  /** When, within the drive, every webhook attempt fails as if the endpoint were unreachable: [from, to) ms. */
  downWindowMs: readonly [number, number];
  /** The fake's retries of a failed delivery (compressed: a message whose retries all fall in the down window is lost). */
  retryScheduleMs: readonly number[];
  dropRate: number;
  duplicateRate: number;
  /** Random delay before a message's first attempt (and a duplicate's second): the deliveries' disorder. */
  delayMs: { min: number; max: number };
  /** What every instance's worker and reconciler are given. */
  settings: LedgerInstanceSettings;
  /** Longest wait, after the drive, for the ledger to equal the fake. */
  settleTimeoutMs: number;
}

/** The options ledger-instance.mjs hands its worker and reconciler. */
export interface LedgerInstanceSettings {
  readsPerMinute: number;
  schedule: ReconcileScheduleOptions;
  lockMs: number;
  /** Share of `onChange` calls that throw after writing their effect (which must then not exist). */
  onChangeFailRate: number;
  reconcilerPollMs: number;
  worker: {
    concurrency: number;
    leaseMs: number;
    pollIntervalMs: number;
    eventTimeoutMs: number;
    retry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  };
}

/** A warning an instance printed that a change was found by polling. */
interface MissedWarning {
  kind: EventKind;
  refId: string;
  version: number;
  pid: number | undefined;
}

/** What a run measured and what it found wrong, by the issue's letters. */
export interface LedgerChaosReport {
  refIds: number;
  transitions: number;
  /** Changes in the fake's histories, by kind of change (status, submitted, reopened, decided, overturned). */
  changes: Record<string, number>;
  /** Effect rows by source. */
  effectsBySource: Record<string, number>;
  /** Changes the ledger recorded (the sum of its rows' versions). */
  recorded: number;
  missedWarnings: number;
  /** Reconcile effects without a warning, each written by an instance killed before it could print one. */
  unloggedByKilled: number;
  onChangeThrows: number;
  kills: number;
  messages: number;
  dropped: number;
  /** Messages whose every attempt failed (the endpoint down window, or all instances dead): lost, as with Svix. */
  failed: number;
  duplicated: number;
  reads: number;
  maxReadsPerMinute: number;
  maxReadsPer10s: number;
  budgetPerMinute: number;
  /** Seconds from the first transition to the ledger equal to the fake (or the timeout). */
  settleSeconds: number;
  seconds: number;
  crashes: string[];
  /** (a) refIds whose ledger differs from the fake at the end (status, or the last change not recorded). */
  notEqual: string[];
  /** (b) refIds whose effects are not a subsequence of the fake's history in order, or whose versions are not 1..n. */
  outOfOrder: string[];
  /** (c) refIds with an effect doubled, or effects not one per recorded change. */
  notOnce: string[];
  /** (e) reconcile changes that no instance logged, or warnings of changes not recorded. */
  unlogged: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;

/** Headers a Svix delivery carries that the instance's route reads. */
const forwarded = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && /^(svix-|webhook-|content-type$|user-agent$)/.test(entry[0]),
    ),
  );

/**
 * A load balancer in front of the instances: each delivery attempt goes to the next instance in
 * turn; one that is down (killed, restarting) answers 502, as a balancer with a dead backend does,
 * and the fake retries on its schedule.
 */
async function startBalancer(targets: () => ReadonlyArray<ChaosInstance | undefined>): Promise<{ url: string; close(): Promise<void> }> {
  const dispatcher = new Agent({ connections: 32, headersTimeout: 10_000, bodyTimeout: 10_000 });
  let turn = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const list = targets();
    const target = list[turn++ % list.length];
    let status = 502;
    if (target !== undefined) {
      try {
        const answer = await request(target.url, {
          method: 'POST',
          headers: forwarded(req.headers),
          body: Buffer.concat(chunks),
          dispatcher,
        });
        await answer.body.dump();
        status = answer.statusCode;
      } catch {
        status = 502;
      }
    }
    res.writeHead(status).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher.close();
    },
  };
}

/** One transition of a verification, applied to the fake at `at` ms into the drive. */
interface Step {
  at: number;
  apply(fake: FakeService): void;
}

/** A transition: the status it leads to, and how the fake is driven there. */
type Move = [next: string, apply: (fake: FakeService) => void];

/** KYB: opened, submitted, sent for review, decided; a final decision is overturned or the case reopened. */
function kybMoves(refId: string, status: string): Move[] {
  switch (status) {
    case 'NOT_STARTED':
      return [['IN_PROGRESS', (f) => f.kyb.setStatus(refId, 'IN_PROGRESS')]];
    case 'IN_PROGRESS':
      return [
        ['IN_REVIEW', (f) => f.kyb.setStatus(refId, 'IN_REVIEW')],
        ['IN_PROGRESS', (f) => f.kyb.submit(refId)],
        ['COMPLETED', (f) => f.kyb.decide(refId, 'COMPLETED')],
      ];
    case 'IN_REVIEW':
      return [
        ['COMPLETED', (f) => f.kyb.decide(refId, 'COMPLETED')],
        ['REJECTED', (f) => f.kyb.decide(refId, 'REJECTED')],
        ['IN_PROGRESS', (f) => f.kyb.reopen(refId, ['documents'], 'a document is unreadable')],
      ];
    default: {
      const other = status === 'COMPLETED' ? 'REJECTED' : 'COMPLETED';
      return [
        [other, (f) => f.kyb.decide(refId, other)],
        ['IN_PROGRESS', (f) => f.kyb.reopen(refId, ['ownership'], 'an owner is missing')],
      ];
    }
  }
}

/** KYC: reviewed, decided, a decision overturned or reviewed again. */
function kycMoves(refId: string, status: string): Move[] {
  switch (status) {
    case 'PENDING':
      return [
        ['IN_REVIEW', (f) => f.kyc.setStatus(refId, 'IN_REVIEW')],
        ['APPROVED', (f) => f.kyc.decide(refId, 'APPROVED')],
      ];
    case 'IN_REVIEW':
      return [
        ['APPROVED', (f) => f.kyc.decide(refId, 'APPROVED')],
        ['REJECTED', (f) => f.kyc.decide(refId, 'REJECTED')],
        ['PENDING', (f) => f.kyc.setStatus(refId, 'PENDING')],
      ];
    default: {
      const other = status === 'APPROVED' ? 'REJECTED' : 'APPROVED';
      return [
        [other, (f) => f.kyc.decide(refId, other)],
        ['IN_REVIEW', (f) => f.kyc.setStatus(refId, 'IN_REVIEW')],
      ];
    }
  }
}

/**
 * A random walk of `count` transitions from a new case or session. Every move changes the result
 * (its `updatedAt`), so each is a version of the fake's history and a change the ledger must record
 * or skip over, never repeat.
 */
function walk(kind: EventKind, refId: string, count: number): Array<(fake: FakeService) => void> {
  const movesFrom = kind === 'kyb' ? kybMoves : kycMoves;
  let status = kind === 'kyb' ? 'NOT_STARTED' : 'PENDING';
  return Array.from({ length: count }, () => {
    const [next, apply] = pick(movesFrom(refId, status));
    status = next;
    return apply;
  });
}

/** The "a webhook was missed" warnings in an instance's output. */
function missedWarnings(instance: ChaosInstance): MissedWarning[] {
  const found: MissedWarning[] = [];
  for (const line of instance.output().split('\n')) {
    if (!line.startsWith('{') || !line.includes('a webhook was missed')) continue;
    try {
      const { kind, refId, version } = JSON.parse(line) as MissedWarning;
      found.push({ kind, refId, version, pid: instance.pid });
    } catch {
      // The last line of a SIGKILLed instance may be cut short: its change is then one without a warning.
    }
  }
  return found;
}

const countLines = (instance: ChaosInstance, text: string) => instance.output().split(text).length - 1;

/**
 * Runs the ledger chaos scenario: a fake service in this process whose webhooks reach `instances`
 * instance processes through a round-robin balancer; `refIds` verifications created through a
 * client that tracks them in the ledger, each then moved through a random history over the drive,
 * while deliveries are dropped, duplicated, delayed, refused during an endpoint-down window, and
 * instances are SIGKILLed and restarted. Waits for the ledger to equal the fake, then checks what
 * the issue asks, per refId, and answers the figures and every refId found wrong.
 */
export async function runLedgerChaos(engine: LedgerChaosEngine, options: LedgerChaosOptions): Promise<LedgerChaosReport> {
  const started = Date.now();
  const instances: Array<ChaosInstance | undefined> = [];
  const everyInstance: ChaosInstance[] = [];
  const killedPids = new Set<number>();
  const crashes: string[] = [];
  const balancer = await startBalancer(() => instances);
  const fake = await createFakeService({
    webhooks: { endpoints: [balancer.url], retrySchedule: options.retryScheduleMs, timeoutMs: 5_000 },
  });
  const settings = JSON.stringify(options.settings);
  const start = async (index: number) => {
    const args = [
      engine.name,
      FRAMEWORKS[index % FRAMEWORKS.length] as string,
      engine.namespace,
      fake.credentials.webhookSecret,
      engine.url,
      fake.baseUrl,
      fake.credentials.apiKey,
      settings,
    ];
    const instance = await startChaosInstance({ script: INSTANCE, args }, `instance ${index}`, (how) => crashes.push(how));
    everyInstance.push(instance);
    instances[index] = instance;
  };
  const client = createClient({ ...fake.clientOptions, ledger: engine.ledger, ledgerSchedule: options.settings.schedule });
  try {
    await Promise.all(Array.from({ length: options.instances }, (_, i) => start(i)));

    // Created through the client with the ledger: each refId is tracked before its create call.
    const keys = Array.from({ length: options.refIds }, (_, i) =>
      i % 2 === 0 ? { kind: 'kyb' as const, refId: `biz-${i}` } : { kind: 'kyc' as const, refId: `user-${i}` },
    );
    const queue = [...keys];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
          if (key.kind === 'kyb') await client.kyb.createCase({ refId: key.refId });
          else await client.kyc.createSession({ refId: key.refId });
        }
      }),
    );

    const steps: Step[] = keys.flatMap(({ kind, refId }) => {
      const moves = walk(kind, refId, random(options.transitions.min, options.transitions.max));
      const times = moves.map(() => Math.random() * options.driveMs).sort((a, b) => a - b);
      return moves.map((apply, i) => ({ at: times[i] as number, apply }));
    });
    steps.sort((a, b) => a.at - b.at);
    fake.webhooks.configure({ dropRate: options.dropRate, duplicateRate: options.duplicateRate, delayMs: options.delayMs });

    const driveStarted = Date.now();
    let kills = 0;
    const faults = (async () => {
      const events = [
        ...Array.from({ length: options.kills }, (_, k) => ({
          at: ((k + 1) * options.driveMs) / (options.kills + 1),
          kind: 'kill' as const,
        })),
        { at: options.downWindowMs[0], kind: 'down' as const },
        { at: options.downWindowMs[1], kind: 'up' as const },
      ].sort((a, b) => a.at - b.at);
      for (const event of events) {
        await sleep(event.at - (Date.now() - driveStarted));
        if (event.kind === 'down') fake.webhooks.down();
        else if (event.kind === 'up') fake.webhooks.up();
        else {
          const victim = Math.floor(Math.random() * options.instances);
          const instance = instances[victim];
          instances[victim] = undefined;
          if (instance?.pid !== undefined) killedPids.add(instance.pid);
          await instance?.kill();
          kills++;
          await sleep(200);
          await start(victim);
        }
      }
    })();
    for (const step of steps) {
      const wait = step.at - (Date.now() - driveStarted);
      if (wait > 0) await sleep(wait);
      step.apply(fake);
    }
    await faults;

    const histories = new Map(
      keys.map((key) => [`${key.kind}:${key.refId}`, (key.kind === 'kyb' ? fake.kyb : fake.kyc).history(key.refId)]),
    );
    const lastOf = (effects: LedgerEffect[]) => {
      const last = new Map<string, LedgerEffect>();
      for (const effect of effects) {
        const id = `${effect.kind}:${effect.refId}`;
        if ((last.get(id)?.version ?? 0) < effect.version) last.set(id, effect);
      }
      return last;
    };
    const behind = (effects: LedgerEffect[]) => {
      const last = lastOf(effects);
      return [...histories].filter(([id, history]) => last.get(id)?.updatedAt !== history.at(-1)?.updatedAt).length;
    };
    const settleBy = Date.now() + options.settleTimeoutMs;
    while (behind(await engine.effects()) > 0 && Date.now() < settleBy) await sleep(500);
    const settleSeconds = (Date.now() - driveStarted) / 1_000;
    // Warnings are printed just after their change commits: a moment for the last ones to be written.
    await sleep(1_000);
    await Promise.all(instances.map((instance) => instance?.kill()));

    const effects = await engine.effects();
    const byRefId = new Map<string, LedgerEffect[]>();
    for (const effect of effects) {
      const id = `${effect.kind}:${effect.refId}`;
      byRefId.set(id, [...(byRefId.get(id) ?? []), effect]);
    }
    const warnings = everyInstance.flatMap(missedWarnings);
    const warned = new Set(warnings.map((w) => `${w.kind}:${w.refId}:${w.version}`));
    const notEqual: string[] = [];
    const outOfOrder: string[] = [];
    const notOnce: string[] = [];
    const unlogged: string[] = [];
    let recorded = 0;
    for (const [id, history] of histories) {
      const [kind, refId] = id.split(/:(.*)/s) as [EventKind, string];
      const entry = await engine.ledger.get({ kind, refId });
      const own = (byRefId.get(id) ?? []).sort((a, b) => a.version - b.version);
      const final = history.at(-1) as FakeHistoryEntry;
      recorded += entry?.version ?? 0;
      if (entry?.status !== final.status || own.at(-1)?.updatedAt !== final.updatedAt)
        notEqual.push(
          `${id}: ledger ${entry?.status} (last effect ${own.at(-1)?.status} of ${own.at(-1)?.updatedAt}), fake ${final.status} of ${final.updatedAt}`,
        );
      const versions = own.map((e) => e.version);
      if (new Set(versions).size !== versions.length || own.length !== (entry?.version ?? 0))
        notOnce.push(`${id}: effect versions [${versions}], ledger version ${entry?.version}`);
      const seen = own.map((e) => history.find((h) => h.updatedAt === e.updatedAt));
      const inOrder =
        versions.every((v, i) => v === i + 1) &&
        seen.every((h, i) => h !== undefined && h.status === own[i]?.status && (i === 0 || h.version > (seen[i - 1]?.version ?? 0)));
      if (!inOrder)
        outOfOrder.push(
          `${id}: effects ${own.map((e) => `v${e.version}=${e.status}@${e.updatedAt}`).join(' ')}, history ${history.map((h) => `${h.version}=${h.status}@${h.updatedAt}`).join(' ')}`,
        );
    }
    // (e) Every change found by polling is a warning naming it, but the first sight of one that has not
    // moved since its creation (there was no webhook to miss). A SIGKILL between a change's commit and its
    // warning loses the line: excused once per killed instance, and counted.
    const unloggedByKilled = new Map<number, number>();
    for (const effect of effects) {
      if (effect.source !== 'reconcile' || warned.has(`${effect.kind}:${effect.refId}:${effect.version}`)) continue;
      const baseline = effect.version === 1 && !effect.final && (effect.kind === 'kyc' || effect.status === 'NOT_STARTED');
      if (baseline) continue;
      const excused = killedPids.has(effect.pid) && (unloggedByKilled.get(effect.pid) ?? 0) === 0;
      if (excused) unloggedByKilled.set(effect.pid, 1);
      else unlogged.push(`${effect.kind}:${effect.refId} v${effect.version} found by polling (pid ${effect.pid}) with no warning`);
    }
    const reconciled = new Set(effects.filter((e) => e.source === 'reconcile').map((e) => `${e.kind}:${e.refId}:${e.version}`));
    for (const w of warnings) {
      if (!reconciled.has(`${w.kind}:${w.refId}:${w.version}`))
        unlogged.push(`${w.kind}:${w.refId} v${w.version} warned (pid ${w.pid}) but not recorded`);
    }

    const changes: Record<string, number> = {};
    for (const history of histories.values()) for (const h of history.slice(1)) changes[h.change] = (changes[h.change] ?? 0) + 1;
    const effectsBySource: Record<string, number> = {};
    for (const effect of effects) effectsBySource[effect.source] = (effectsBySource[effect.source] ?? 0) + 1;
    const messages = fake.webhooks.messages;
    return {
      refIds: keys.length,
      transitions: steps.length,
      changes,
      effectsBySource,
      recorded,
      missedWarnings: warnings.length,
      unloggedByKilled: unloggedByKilled.size,
      onChangeThrows: everyInstance.reduce((n, instance) => n + countLines(instance, 'chaos: onChange threw'), 0),
      kills,
      messages: messages.length,
      dropped: messages.filter((m) => m.state === 'dropped').length,
      failed: messages.filter((m) => m.state === 'failed').length,
      duplicated: messages.filter((m) => m.duplicate).length,
      reads: fake.requests.filter((r) => r.route === 'kyb.getCase' || r.route === 'kyc.getResult').length,
      maxReadsPerMinute: fake.maxReadsInWindow(60_000),
      maxReadsPer10s: fake.maxReadsInWindow(10_000),
      budgetPerMinute: options.settings.readsPerMinute,
      settleSeconds: Math.round(settleSeconds * 10) / 10,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      crashes,
      notEqual,
      outOfOrder,
      notOnce,
      unlogged,
    };
  } finally {
    await Promise.all(instances.map((instance) => instance?.kill()));
    await client.close();
    await fake.close();
    await balancer.close();
  }
}
