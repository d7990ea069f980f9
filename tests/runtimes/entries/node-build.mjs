// @verikit/core's Node build, loaded by its file (the exports map gives Bun and Deno the Web build):
// its client must still reach the service where undici is a stub (Bun) or may not load (Deno
// without env access). Arguments: base URL, API key.
import { createClient } from '../../../packages/core/dist/esm/index.node.js';

const [baseUrl, apiKey] = globalThis.Deno?.args ?? process.argv.slice(2);
const client = createClient({ apiKey, baseUrl, logger: false });
const details = await client.kyb.getCase('runtime-case');
await client.close();
console.log(`node build: ${details.status}`);
