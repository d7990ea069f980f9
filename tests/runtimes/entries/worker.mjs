import { createApp } from '../scenario.mjs';

let app;
export default {
  // Bindings arrive with the request: the app is built on the first one.
  fetch(request, env, ctx) {
    app ??= createApp(env);
    return app.fetch(request, env, ctx);
  },
};
