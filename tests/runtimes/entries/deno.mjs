import { createApp, VARIABLES } from '../scenario.mjs';

// Only the variables the scenario needs, each by name: the run grants env access to no other.
const env = Object.fromEntries(VARIABLES.map((name) => [name, Deno.env.get(name)]));
Deno.serve(
  {
    port: Number(Deno.env.get('PORT')),
    hostname: '127.0.0.1',
    onListen: ({ port }) => console.log(`listening on ${port} (deno ${Deno.version.deno})`),
  },
  createApp(env).fetch,
);
