import type { FakeService } from '@verikit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInTempFolder, type TestExample } from './support/example.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const OPERATOR_SECRET = 'operator-secret-for-tests-0123456789';

describe('the operator panel is the operator’s: people see no one’s failed deliveries, nor replay them', () => {
  let running: TestExample;
  let fake: FakeService;
  let person: Visitor;
  let failedRefId: string;

  beforeAll(async () => {
    running = await startInTempFolder({ env: { VERIKIT_EXAMPLE_OPERATOR_SECRET: OPERATOR_SECRET } });
    fake = running.example.fake as FakeService;
    // Another business's delivery fails until the worker gives up: a dead letter naming its refId.
    const other = new Visitor(running.example.url);
    await other.signIn('Olga Other', 'Other Business Ltd');
    failedRefId = await other.startVerification('kyb');
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 500 });
    fake.kyb.setStatus(failedRefId, 'IN_REVIEW');
    await fake.webhooks.settle();
    const operator = new Visitor(running.example.url);
    await operator.post('/operations/signin', { secret: OPERATOR_SECRET });
    await waitUntil(
      'the dead letter',
      async () => (await operator.get('/operations')).text,
      (page) => page.includes('data-dead-letters="1"'),
    );
    fake.faults.clear();
    person = new Visitor(running.example.url);
    await person.signIn('Pete Person', 'Person Ltd');
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('a signed-in person’s dashboard lists no failed deliveries and no other business’s refId', async () => {
    const page = (await person.get('/dashboard')).text;
    expect(page).not.toContain('data-operations');
    expect(page).not.toContain(failedRefId);
    expect(page).not.toContain('Replay');
  });

  it('a signed-in person at /operations gets the operator sign-in, and cannot replay', async () => {
    const panel = await person.get('/operations');
    expect(panel.status).toBe(200);
    expect(panel.text).toContain('Operator sign-in');
    expect(panel.text).not.toContain('data-dead-letters');
    const letterId = /<code>([^<]+)<\/code>/.exec((await operatorVisitor()).text)?.[1] as string;
    const replay = await person.post(`/operations/dead-letters/${encodeURIComponent(letterId)}/replay`);
    expect(replay.status).toBe(403);
    expect(replay.text).toContain('Operators only');
  });

  it('a wrong secret is refused; the right one opens the panel, whose Replay runs the delivery again', async () => {
    const guess = new Visitor(running.example.url);
    const refused = await guess.post('/operations/signin', { secret: 'operator-secret-for-tests-012345678X' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('That is not the operator secret.');
    expect((await guess.get('/operations')).text).toContain('Operator sign-in');

    const panel = await operatorVisitor();
    expect(panel.text).toContain('data-dead-letters="1"');
    expect(panel.text).toContain('the service failed');
    const letterId = /<code>([^<]+)<\/code>/.exec(panel.text)?.[1] as string;
    const operator = new Visitor(running.example.url);
    await operator.post('/operations/signin', { secret: OPERATOR_SECRET });
    const replay = await operator.post(`/operations/dead-letters/${encodeURIComponent(letterId)}/replay`);
    expect([replay.status, replay.headers.location]).toEqual([303, '/operations']);
    await waitUntil(
      'the replay',
      async () => (await operator.get('/operations')).text,
      (page) => page.includes('data-dead-letters="0"'),
    );
  });

  /** The panel as a freshly signed-in operator sees it. */
  async function operatorVisitor() {
    const operator = new Visitor(running.example.url);
    await operator.post('/operations/signin', { secret: OPERATOR_SECRET });
    return operator.get('/operations');
  }
});

it('without VERIKIT_EXAMPLE_OPERATOR_SECRET the panel is off, and says how to turn it on', async () => {
  const running = await startInTempFolder();
  try {
    const person = new Visitor(running.example.url);
    await person.signIn('Pete Person', 'Person Ltd');
    const panel = await person.get('/operations');
    expect(panel.status).toBe(404);
    expect(panel.text).toContain('Start the example with VERIKIT_EXAMPLE_OPERATOR_SECRET set to use it.');
    expect((await person.post('/operations/dead-letters/x/replay')).status).toBe(404);
  } finally {
    await running.stop();
  }
});
