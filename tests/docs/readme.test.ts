import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from '@verikit/core';
import { createFakeService, type FakeService } from '@verikit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../test-support/readme-suite.js';
import { REDIS_URL, requireService } from '../../test-support/services.js';
import { checkAndCompile, codeBlocks, readmeFiles, type Snippet, typeCheck } from '../../test-support/snippets.js';

const redisAvailable = await requireService('Redis', REDIS_URL);
const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the repository, so the snippets' imports resolve to the workspace packages as a user's would to theirs.
const work = fileURLToPath(new URL('./.snippets', import.meta.url));
const context = fileURLToPath(new URL('./snippet-context/globals.d.mts', import.meta.url));

/**
 * The ```ts blocks that are whole programs, by README and index: each type-checks on its own and
 * runs below. Every other ```ts block of every README is a fragment of the reader's code, checked
 * with what it takes from there (snippet-context/globals.d.ts).
 */
const PROGRAMS: Record<string, number[]> = {
  'README.md': [0, 1, 2],
  'packages/core/README.md': [0, 3, 5, 10],
  'packages/express/README.md': [0],
  'packages/postgres/README.md': [1, 2],
  'packages/redis/README.md': [1, 2],
  'packages/fastify/README.md': [0],
  'packages/testing/README.md': [0, 1, 3],
};

/** `packages/core/README.md` block 0 -> `core-0`; the root README's -> `root-0`. */
const nameOf = (file: string, index: number) => `${file === 'README.md' ? 'root' : (file.split('/')[1] as string)}-${index}`;

const blocks = readmeFiles(root).flatMap((file) =>
  codeBlocks(`${root}/${file}`, 'ts').map((block, index) => ({ file, index, name: nameOf(file, index), code: block.code })),
);
const isProgram = (b: { file: string; index: number }) => PROGRAMS[b.file]?.includes(b.index) ?? false;
const programs: Snippet[] = blocks.filter(isProgram);
// A module, as a reader's file would be: its names stay its own.
const fragments: Snippet[] = blocks.filter((b) => !isProgram(b)).map(({ name, code }) => ({ name, code: `${code}\nexport {};\n` }));
const compiled = new Map<string, string>();

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  const [paths] = await Promise.all([
    checkAndCompile(`${work}/programs`, programs),
    typeCheck(`${work}/fragments`, fragments, { context }),
  ]);
  for (const [i, { name }] of programs.entries()) compiled.set(name, paths[i] as string);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The compiled program `name` (beforeAll type-checked it). */
const program = (name: string): string => {
  const path = compiled.get(name);
  if (path === undefined) throw new Error(`no program ${name}`);
  return path;
};

/** Runs a compiled snippet to its end and returns what it printed. */
async function runToEnd(file: string, env: Record<string, string> = {}): Promise<string> {
  const script = runScript(file, `${work}/programs`, env);
  // Closed, not just exited: by then every byte the program printed has been read.
  const code = await script.closed;
  const output = script.output();
  expect(code, output).toBe(0);
  return output;
}

/** The variables a program reads, pointing at `fake`. */
const envOf = (fake: FakeService): Record<string, string> => ({
  VERIKIT_API_KEY: fake.credentials.apiKey,
  VERIKIT_BASE_URL: fake.baseUrl,
  VERIKIT_WEB_URL: fake.webUrl,
  VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
});

it('type-checks every ```ts block of every README (root, packages, recipes) with strict settings (beforeAll)', () => {
  const files = new Set(blocks.map((b) => b.file));
  for (const readme of ['README.md', 'packages/core/README.md', 'packages/postgres/README.md', 'packages/redis/README.md'])
    expect(files).toContain(readme);
  // Each listed program exists and is whole: it starts with its imports.
  for (const [file, indexes] of Object.entries(PROGRAMS))
    for (const index of indexes)
      expect(blocks.find((b) => b.file === file && b.index === index)?.code, `${file} #${index}`).toMatch(/^import /);
  expect(programs.length + fragments.length).toBe(blocks.length);
  expect(fragments.length).toBeGreaterThan(0);
});

describe('root README', () => {
  it('has the three programs this test expects (client, framework, testing)', () => {
    expect(blocks.find((b) => b.name === 'root-0')?.code).toContain('createClient');
    expect(blocks.find((b) => b.name === 'root-1')?.code).toContain('declare global');
    expect(blocks.find((b) => b.name === 'root-2')?.code).toContain('createFakeService');
  });

  it('the client snippet runs as written against the fake', async () => {
    const fake = await createFakeService();
    try {
      const output = await runToEnd(program('root-0'), envOf(fake));
      expect(output).toMatch(/hosted link for business-42, valid until .+ true/);
      expect(output).toContain('NOT_STARTED not final yet');
    } finally {
      await fake.close();
    }
  });

  describe('the framework snippet (typed req.user)', () => {
    readmeServerSuite((env) => runScript(program('root-1'), `${work}/programs`, env));
  });

  it('the testing snippet creates the case, and the receiver with the fake secret gets the webhook', async () => {
    const output = await runToEnd(program('root-2'));
    expect(output).toMatch(/\[ 'msg_[\w-]+: COMPLETED' \]/);
  });
});

describe('core README', () => {
  it('the client snippet runs as written: narrows the steps to the document step and downloads its files', async () => {
    const fake = await createFakeService();
    try {
      // The business has filled in the portal already, so the case has documents to download.
      const client = createClient(fake.clientOptions);
      await client.kyb.createCase({ refId: 'business-42' });
      await client.close();
      fake.kyb.submit('business-42');
      const output = await runToEnd(program('core-0'), envOf(fake));
      expect(output).toContain('downloading certificate-of-incorporation.pdf\ndownloading bank-statement.png\n');
      expect(output).toMatch(/pending\n$/);
    } finally {
      await fake.close();
    }
  });
});

describe('core README: the verification ledger', () => {
  it('the ledger program runs as written: the reconciler finds every change of a case whose webhooks never arrive, in order, once', async () => {
    const output = await runToEnd(program('core-3'));
    const changes = output.split('\n').filter((line) => line.startsWith('business-42 v'));
    expect(changes).toEqual([
      'business-42 v1: null -> NOT_STARTED (reconcile)',
      'business-42 v2: NOT_STARTED -> IN_REVIEW (reconcile)',
      'business-42 v3: IN_REVIEW -> COMPLETED (reconcile)',
    ]);
    expect(output).toContain('webhooks missed: 2');
    expect(output.match(/a webhook was missed/g)).toHaveLength(2);
  });
});

describe('core README: health', () => {
  it('the health program runs as written on PGlite: ok, the accepted event pending, a 200 with the ledger checked', async () => {
    const output = await runToEnd(program('core-5'));
    expect(output).toBe('ok pending: 1\n200 ok\n');
  });
});

describe('core README: metrics', () => {
  it('the metrics program runs as written: the accepted delivery and its repeat, as a Prometheus scrape reads them', async () => {
    const output = await runToEnd(program('core-10'));
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^verikit_webhook_deliveries_total\{verikit_outcome="accepted",otel_scope_name="@verikit\/core",otel_scope_version="[^"]+"\} 1$/,
    );
    expect(lines[1]).toMatch(/^verikit_webhook_deliveries_total\{verikit_outcome="duplicate",.*\} 1$/);
  });
});

describe('postgres README: the ledger', () => {
  it('the ledger program runs as written on PGlite: each change with its ctx.sql row, once, in order', async () => {
    const output = await runToEnd(program('postgres-1'));
    expect(output).toContain('v1 NOT_STARTED, v2 IN_REVIEW, v3 COMPLETED');
  });
});

describe('postgres README: personal data', () => {
  it('the retention, encryption and erasure program runs as written on PGlite: sealed at rest, opened by get, erased with its ledger row', async () => {
    const output = await runToEnd(program('postgres-2'), { VERIKIT_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect(output).toBe('vk1.2026-11.\ntrue\n{ erased: 1 }\ntrue\ndone removed\n');
  });
});

describe('redis README: the ledger', () => {
  it.runIf(redisAvailable)('the ledger program runs as written on Redis: each change with its ctx.sql write, once, in order', async () => {
    const output = await runToEnd(program('redis-1'), { REDIS_URL });
    expect(output).toContain(
      "[\n  'business-42 v1: NOT_STARTED (reconcile)',\n  'business-42 v2: IN_REVIEW (reconcile)',\n  'business-42 v3: COMPLETED (reconcile)'\n]",
    );
  });
});

describe('redis README: personal data', () => {
  it.runIf(redisAvailable)(
    'the retention, encryption and erasure program runs as written on Redis: sealed in the job, opened by get, erased with its ledger row',
    async () => {
      const output = await runToEnd(program('redis-2'), { REDIS_URL, VERIKIT_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
      // Besides the persistence warnings of a Redis without an AOF, as the tests' server is.
      const printed = output.split('\n').filter((line) => !line.startsWith('verikit: the Redis server can lose what verikit writes'));
      expect(printed.join('\n')).toBe('vk1.2026-11.\ntrue\n{ erased: 1 }\ntrue\ndone removed\n');
    },
  );
});

describe('adapter READMEs', () => {
  it('the Express and Fastify programs show a typed req.user, and mount their invite routes as written', async () => {
    expect(
      ['express-0', 'fastify-0'].every((name) => /declare (global|module 'fastify')/.test(blocks.find((b) => b.name === name)?.code ?? '')),
    ).toBe(true);
    const fake = await createFakeService();
    try {
      // Each builds its app (the invite routes check the client's hosted-link settings at once) and ends.
      for (const name of ['express-0', 'fastify-0']) await runToEnd(program(name), envOf(fake));
    } finally {
      await fake.close();
    }
  });
});

describe('testing README', () => {
  it('the main snippet runs as written: the receiver, with the fake secret, sees the case complete', async () => {
    const output = await runToEnd(program('testing-0'));
    expect(output).toContain('true [');
    expect(output).toMatch(/'acme-1 COMPLETED' \]/);
    expect(output).toMatch(/\[ 204(, 204)* \]/);
  });

  it('the history snippet runs as written: the read maps to the overturning version, one read counted', async () => {
    const output = await runToEnd(program('testing-1'));
    expect(output).toMatch(/^4 overturned\n1$/m);
  });

  it('the store contract snippet runs under node:test as written, every case passing', async () => {
    const output = await runToEnd(program('testing-3'));
    expect(output).toMatch(/# pass [1-9]\d*/);
    expect(output).toContain('# fail 0');
  });
});
