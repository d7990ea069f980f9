// A keep-alive HTTP server in a process of its own, answering every request with one fixed JSON
// body, so the benchmarked client's CPU time (process.cpuUsage) holds none of the server's work.
import { createServer } from 'node:http';

const body = Buffer.from(process.argv[2]);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
process.on('disconnect', () => server.close(() => process.exit(0)));
