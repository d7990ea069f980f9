/** The globals that tell runtimes apart (each present only on its own runtime). */
interface RuntimeGlobals {
  Bun?: { version?: string };
  Deno?: { version?: { deno?: string } };
  navigator?: { userAgent?: string };
  process?: { versions?: { node?: string } };
}

/**
 * The runtime this code runs on, for the client's user agent: `node/20.20.2`, `bun/1.4.5`,
 * `deno/2.9.6`, `workerd`, else what `navigator.userAgent` says. Bun and Deno are asked first:
 * both also report a Node version.
 */
export function runtimeName(): string {
  const g = globalThis as RuntimeGlobals;
  if (typeof g.Bun?.version === 'string') return `bun/${g.Bun.version}`;
  if (typeof g.Deno?.version?.deno === 'string') return `deno/${g.Deno.version.deno}`;
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof g.process?.versions?.node === 'string') return `node/${g.process.versions.node}`;
  return g.navigator?.userAgent ?? 'unknown runtime';
}
