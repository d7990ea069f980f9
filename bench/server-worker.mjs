// A keep-alive HTTP server in its own thread, answering every request with one fixed JSON body,
// so the benchmarked client does not share an event loop with the server.
import { createServer } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const body = Buffer.from(workerData.body);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', (message) => {
  if (message === 'close') server.close(() => process.exit(0));
});
