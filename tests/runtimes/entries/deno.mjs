import { createApp } from '../scenario.mjs';

// Run with only --allow-net and --allow-read: the settings come from a file, and neither verikit
// nor the app may read the environment.
const env = JSON.parse(await Deno.readTextFile(Deno.args[0]));
Deno.serve(
  {
    port: Number(env.PORT),
    hostname: '127.0.0.1',
    onListen: ({ port }) => console.log(`listening on ${port} (deno ${Deno.version.deno})`),
  },
  createApp(env).fetch,
);
