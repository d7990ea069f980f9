// The fake service for the ledger benchmark, in a process of its own: the CPU it spends answering
// is not the benchmarked process's, and its request log (arrival times) is read over IPC.
import { createFakeService } from '@verikit/testing';

const READS = new Set(['kyb.getCase', 'kyc.getResult']);
const fake = await createFakeService();
process.send({ clientOptions: fake.clientOptions });
process.on('message', async (message) => {
  if (message.type === 'reads') {
    const reads = fake.requests.filter((r) => READS.has(r.route)).map((r) => ({ at: r.at, status: r.status }));
    process.send({ reads, maxIn60s: fake.maxReadsInWindow(60_000) });
  } else if (message.type === 'close') {
    await fake.close();
    process.exit(0);
  }
});
