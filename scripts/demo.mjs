// The main job until apps/example lands: the client against a small local stand-in of the service.
import { createServer } from 'node:http';
import { createClient, isFinal } from '@verikit/core';

const API_KEY = 'demo-api-key';
const cases = new Map();

const server = createServer((req, res) => {
  const send = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.headers['x-api-key'] !== API_KEY) return send(401, { message: 'Unauthorized' });
  let raw = '';
  req.on('data', (chunk) => {
    raw += chunk;
  });
  req.on('end', () => {
    const url = new URL(req.url, 'http://local');
    if (req.method === 'POST' && url.pathname === '/kyb/case') {
      const { refId } = JSON.parse(raw);
      const header = Buffer.from('{"alg":"none"}').toString('base64url');
      const payload = Buffer.from(JSON.stringify({ sub: refId, exp: Math.floor(Date.now() / 1000) + 86_400 })).toString('base64url');
      cases.set(refId, { id: `case_${cases.size + 1}`, refId, status: 'NOT_STARTED' });
      return send(200, {
        kybCase: { _id: cases.get(refId).id, refId, status: 'NOT_STARTED', flow: 'flow_default' },
        token: `${header}.${payload}.`,
      });
    }
    const match = /^\/kyb\/case\/([^/]+)\/details$/.exec(url.pathname);
    const found = match && cases.get(decodeURIComponent(match[1]));
    if (req.method === 'GET' && found) {
      return send(200, {
        ...found,
        flow: { id: 'flow_default', title: 'Standard KYB' },
        steps: [],
        amlScreening: { primary: [], related: [] },
        reopenHistory: [],
      });
    }
    send(404, { message: 'Not found' });
  });
});

await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const client = createClient({ apiKey: API_KEY, baseUrl, webUrl: 'https://verify.example.test', publicKey: 'pk_demo' });

const created = await client.kyb.createCase({ refId: 'acme-ltd', country: 'GB' });
const link = client.verificationLink(created.token);
const details = await client.kyb.getCase('acme-ltd');
console.log(`local stand-in service: ${baseUrl}`);
console.log(`created KYB case ${created.kybCase._id} for refId ${created.kybCase.refId} (status ${created.kybCase.status})`);
console.log(`hosted link (token valid until ${link.expiresAt?.toISOString()}):\n  ${link.url}`);
console.log(`case details: status ${details.status}, final: ${isFinal(details.status)}`);
await client.close();
server.close();
