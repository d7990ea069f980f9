import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createFakeService } from '@verikit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../test-support/readme-suite.js';
import { checkAndCompile, codeBlocks, programs } from '../../test-support/snippets.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the repository, so the snippets' imports resolve to the workspace packages as a user's would to theirs.
const work = fileURLToPath(new URL('./.snippets', import.meta.url));

const rootPrograms = programs(codeBlocks(`${root}/README.md`, 'ts'));
const testingPrograms = programs(codeBlocks(`${root}/packages/testing/README.md`, 'ts')).filter((b) =>
  b.code.includes('createFakeService'),
);
// Typed programs of the adapter READMEs: type-checked with the rest (their ```js servers run in each package's own test).
const adapterPrograms = ['express', 'fastify', 'hono'].flatMap((pkg) =>
  programs(codeBlocks(`${root}/packages/${pkg}/README.md`, 'ts')).map((b, i) => ({ name: `${pkg}-${i}`, code: b.code })),
);
let compiled: string[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  compiled = await checkAndCompile(work, [
    ...rootPrograms.map((b, i) => ({ name: `root-${i}`, code: b.code })),
    ...testingPrograms.map((b, i) => ({ name: `testing-${i}`, code: b.code })),
    ...adapterPrograms,
  ]);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a compiled snippet to its end and returns what it printed. */
async function runToEnd(file: string, env: Record<string, string> = {}): Promise<string> {
  const script = runScript(file, work, env);
  // Closed, not just exited: by then every byte the program printed has been read.
  const code = await script.closed;
  const output = script.output();
  expect(code, output).toBe(0);
  return output;
}

describe('root README', () => {
  it('has the three programs this test expects (client, framework, testing), each complete', () => {
    expect(rootPrograms).toHaveLength(3);
    expect(rootPrograms[0]?.code).toContain('createClient');
    expect(rootPrograms[1]?.code).toContain('declare global');
    expect(rootPrograms[2]?.code).toContain('createFakeService');
  });

  it('the client snippet runs as written against the fake', async () => {
    const fake = await createFakeService();
    try {
      const output = await runToEnd(compiled[0] as string, {
        VERIKIT_API_KEY: fake.credentials.apiKey,
        VERIKIT_BASE_URL: fake.baseUrl,
        VERIKIT_WEB_URL: fake.webUrl,
        VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
      });
      expect(output).toMatch(/hosted link for business-42, valid until .+ true/);
      expect(output).toContain('NOT_STARTED not final yet');
    } finally {
      await fake.close();
    }
  });

  describe('the framework snippet (typed req.user)', () => {
    readmeServerSuite((env) => runScript(compiled[1] as string, work, env));
  });

  it('the testing snippet creates the case, and the receiver with the fake secret gets the webhook', async () => {
    const output = await runToEnd(compiled[2] as string);
    expect(output).toMatch(/\[ 'msg_[\w-]+: COMPLETED' \]/);
  });
});

it('the Express and Fastify READMEs show a typed req.user, and it type-checks (beforeAll)', () => {
  expect(adapterPrograms.map((p) => p.name)).toEqual(['express-0', 'fastify-0']);
  expect(adapterPrograms.every((p) => /declare (global|module 'fastify')/.test(p.code))).toBe(true);
});

describe('testing README', () => {
  it('the main snippet runs as written: the receiver, with the fake secret, sees the case complete', async () => {
    expect(testingPrograms).toHaveLength(2);
    const output = await runToEnd(compiled[rootPrograms.length] as string);
    expect(output).toContain('true [');
    expect(output).toMatch(/'acme-1 COMPLETED' \]/);
    expect(output).toMatch(/\[ 204(, 204)* \]/);
  });

  it('the history snippet runs as written: the read maps to the overturning version, one read counted', async () => {
    const output = await runToEnd(compiled[rootPrograms.length + 1] as string);
    expect(output).toMatch(/^4 overturned\n1$/m);
  });
});
