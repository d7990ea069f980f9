import type { Router } from 'hono/router';

/**
 * The sub-app's own router, asked only when the sub-app is served by itself. Mounted with
 * `app.route()`, its routes are copied into the host's router and this one is never asked, so the
 * host carries no second router whatever its preset. It matches fixed paths, which is all verikit's
 * routes are, and middleware on every path (`use(mw)`); mount the sub-app for anything more.
 */
export function fixedPathRouter<T>(): Router<T> {
  const routes: Array<{ method: string; path: string; handler: T }> = [];
  return {
    name: 'verikit fixed paths',
    add(method, path, handler) {
      routes.push({ method, path, handler });
    },
    match: (method, path) => [
      routes
        .filter((route) => (route.method === method || route.method === 'ALL') && (route.path === path || route.path === '/*'))
        .map((route) => [route.handler, {}]),
    ],
  };
}
