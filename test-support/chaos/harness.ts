import { once } from 'node:events';
import { signWebhook } from '@verikit/testing';
import { Agent, request } from 'undici';
import { startProcess } from '../processes.js';

/** What the harness needs of an engine (PostgreSQL here; Redis reuses it): processes, faults, and the truth at the end. */
export interface ChaosEngine {
  /** The server script and its arguments for one instance (an Express, Fastify or Hono host app). */
  instance(index: number): { script: string; args: string[] };
  /** Kills some of the instances' connections to the engine; answers how many. */
  killConnections(): Promise<number>;
  /** Whether the event is durable now (inline: its effect is written; inbox: it is stored). */
  isDurable(id: string): Promise<boolean>;
  /** Whether no event is left to run (inbox mode: the queue is drained). */
  settled(): Promise<boolean>;
  /** How many effect rows each id has. */
  effects(): Promise<Map<string, number>>;
  /** How many times onEvent ran past its failure point, per id (re-runs after a crash show here). */
  runs(): Promise<number>;
}

/** Harness settings. */
export interface ChaosOptions {
  mode: 'inline' | 'inbox';
  secret: string;
  distinct: number;
  copiesPerId: number;
  instances: number;
  /** SIGKILL + restart of one instance, at least this many times while deliveries are sent. */
  kills: number;
  /** Svix-like retry schedule, compressed: delays before each attempt. */
  scheduleMs: number[];
  /** Deliveries in flight at once. */
  concurrency: number;
}

/** What a run measured. */
export interface ChaosFigures {
  deliveries: number;
  distinct: number;
  attempts: number;
  statuses: Record<string, number>;
  kills: number;
  /** Instances that exited without being killed by the harness (a crash), with how they ended. */
  crashes: string[];
  /** For each delivery the sender gave up on: its id and every attempt as `ms since start:answer`. */
  givenUpHistories: string[];
  killedConnections: number;
  givenUp: number;
  earlyAcks: number;
  lost: number;
  doubled: number;
  runs: number;
  seconds: number;
}

/** One instance process of a chaos run. */
export interface ChaosInstance {
  /** Its webhook route. */
  url: string;
  /** Its process id (effects may record it). */
  pid: number | undefined;
  /** Everything it printed, also after it was killed. */
  output(): string;
  /** SIGKILLs the instance (its whole process group) and waits until it is gone. */
  kill(): Promise<void>;
}

/**
 * Starts one instance (an Express, Fastify or Hono host app that sends `{ port }` once listening)
 * and waits for its port. An exit the caller did not cause is a crash: told to `onCrash` with what
 * it printed last, so the run can fail saying so.
 */
export async function startChaosInstance(
  command: { script: string; args: string[] },
  label: string,
  onCrash: (how: string) => void,
): Promise<ChaosInstance> {
  const instance = startProcess(process.execPath, [command.script, ...command.args], { cwd: process.cwd(), ipc: true });
  const { child } = instance;
  let killed = false;
  child.once('exit', (code, signal) => {
    if (!killed) onCrash(`${label} exited (code ${code}, signal ${signal}): ${instance.output().slice(-2_000)}`);
  });
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`chaos ${label} exited with ${code} before listening: ${instance.output()}`);
    }),
  ])) as [{ port: number }];
  return {
    url: `http://127.0.0.1:${message.port}/verikit/webhook`,
    pid: child.pid,
    output: instance.output,
    kill: () => {
      killed = true;
      return instance.stop({ signal: 'SIGKILL' });
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the multi-instance chaos scenario: `instances` server processes, a Svix-like sender that
 * retries any non-2xx or connection error on its schedule, every id sent `copiesPerId` times (some
 * copies at the same instant, to different instances), connections to the engine killed now and
 * then, and one instance SIGKILLed and restarted at least `kills` times. Answers the figures; the
 * caller asserts on them.
 */
export async function runChaos(engine: ChaosEngine, options: ChaosOptions): Promise<ChaosFigures> {
  const started = Date.now();
  const instances: Array<ChaosInstance | undefined> = [];
  const crashes: string[] = [];
  const start = (index: number) => startChaosInstance(engine.instance(index), `instance ${index}`, (how) => crashes.push(how));
  for (let i = 0; i < options.instances; i++) instances[i] = await start(i);
  const dispatcher = new Agent({ connections: 64, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const statuses: Record<string, number> = {};
  let attempts = 0;
  let givenUp = 0;
  let earlyAcks = 0;
  let kills = 0;
  let killedConnections = 0;
  let sending = true;

  const givenUpHistories: string[] = [];
  const deliver = async (id: string, payload: string): Promise<void> => {
    const history: string[] = [];
    for (const delay of options.scheduleMs) {
      if (delay > 0) await sleep(delay);
      attempts++;
      // Like a load balancer: each attempt may land on another instance, or on one that is down.
      const target = instances[Math.floor(Math.random() * instances.length)];
      let status = 'down';
      if (target !== undefined) {
        const signed = signWebhook({ secret: options.secret, payload, id });
        try {
          const response = await request(target.url, { method: 'POST', headers: signed.headers, body: signed.body, dispatcher });
          await response.body.dump();
          status = String(response.statusCode);
        } catch {
          status = 'error';
        }
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      history.push(`${Date.now() - started}:${status}`);
      if (status.startsWith('2')) {
        // A 2xx tells the sender to stop: the event must be durable by now.
        if (!(await engine.isDurable(id))) earlyAcks++;
        return;
      }
    }
    givenUp++;
    givenUpHistories.push(`${id} ${history.join(' ')}`);
  };

  const faults = (async () => {
    const sendWindow = 4_000;
    const killAt = Array.from({ length: options.kills }, (_, k) => ((k + 1) * sendWindow) / (options.kills + 1));
    const t0 = Date.now();
    let nextKill = 0;
    while (sending || nextKill < killAt.length) {
      await sleep(250);
      if (Math.random() < 0.3) killedConnections += await engine.killConnections().catch(() => 0);
      if (nextKill < killAt.length && Date.now() - t0 >= (killAt[nextKill] as number)) {
        nextKill++;
        const victim = Math.floor(Math.random() * instances.length);
        const instance = instances[victim];
        instances[victim] = undefined;
        await instance?.kill();
        kills++;
        await sleep(200);
        instances[victim] = await start(victim);
      }
    }
  })();

  const ids = Array.from({ length: options.distinct }, (_, i) => `msg_chaos_${started}_${i}`);
  const payloads = new Map(
    ids.map((id, i) => [id, JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: `biz-${i}`, note: 'Zoë / \\/' } })]),
  );
  const shuffled = <T>(list: T[]): T[] => {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [list[i], list[j]] = [list[j] as T, list[i] as T];
    }
    return list;
  };
  // Two copies of each id side by side, so two senders take them at the same instant; the other
  // copies at random places, so they meet the first ones in flight, leased, done or lost.
  const pairs = shuffled([...ids]).flatMap((id) => [id, id]);
  const rest = shuffled(ids.flatMap((id) => Array.from({ length: options.copiesPerId - 2 }, () => id)));
  const queue: string[] = [];
  while (pairs.length > 0 || rest.length > 0) queue.push(...pairs.splice(0, 2), ...rest.splice(0, options.copiesPerId - 2));
  queue.reverse();
  const deliveries = queue.length;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let id = queue.pop(); id !== undefined; id = queue.pop()) await deliver(id, payloads.get(id) as string);
    }),
  );
  sending = false;
  await faults;
  const settleBy = Date.now() + 60_000;
  while (!(await engine.settled())) {
    if (Date.now() > settleBy) break;
    await sleep(200);
  }
  const effects = await engine.effects();
  const figures: ChaosFigures = {
    deliveries,
    distinct: ids.length,
    attempts,
    statuses,
    kills,
    crashes,
    killedConnections,
    givenUp,
    givenUpHistories,
    earlyAcks,
    lost: ids.filter((id) => !effects.has(id)).length,
    doubled: [...effects.values()].filter((n) => n > 1).length,
    runs: await engine.runs(),
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
  await Promise.all(instances.map((instance) => instance?.kill()));
  await dispatcher.close();
  return figures;
}
