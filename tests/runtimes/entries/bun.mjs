import { createApp } from '../scenario.mjs';

const server = Bun.serve({ fetch: createApp(process.env).fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
console.log(`listening on ${server.port} (bun ${Bun.version})`);
