import { serve } from '@hono/node-server';
import { createApp } from '../scenario.mjs';

const port = Number(process.env.PORT);
serve({ fetch: createApp(process.env).fetch, port, hostname: '127.0.0.1' }, () =>
  console.log(`listening on ${port} (node ${process.version})`),
);
