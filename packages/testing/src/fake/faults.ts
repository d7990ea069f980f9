/** The fake's routes, as fault injection names them. */
export type FakeRoute =
  | 'kyb.createCase'
  | 'kyb.getCase'
  | 'kyb.documentUrl'
  | 'kyb.flows'
  | 'kyb.defaultFlows'
  | 'kyc.createSession'
  | 'kyc.getResult'
  | 'storage.download';

/** What can go wrong on a route. */
export type Fault =
  | { kind: 'latency'; ms: number }
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  | { kind: 'reset' }
  | { kind: 'malformed-json' }
  | { kind: 'wrong-shape' };

interface Armed {
  fault: Fault;
  remaining: number;
}

/** Per-route faults, each firing `times` times (default: until cleared). */
export class FaultInjector {
  private readonly armed = new Map<FakeRoute, Armed[]>();

  /** Arms `fault` on `route` for the next `times` requests (default: every request until `clear`). */
  inject(route: FakeRoute, fault: Fault, options: { times?: number } = {}): void {
    const list = this.armed.get(route) ?? [];
    list.push({ fault, remaining: options.times ?? Number.POSITIVE_INFINITY });
    this.armed.set(route, list);
  }

  /** Removes the faults of one route, or of all. */
  clear(route?: FakeRoute): void {
    if (route === undefined) this.armed.clear();
    else this.armed.delete(route);
  }

  /** The faults to apply to this request (latency first), consuming one use of each. */
  take(route: FakeRoute): Fault[] {
    const list = this.armed.get(route);
    if (!list) return [];
    const taken = list
      .filter((a) => a.remaining > 0)
      .map((a) => {
        a.remaining--;
        return a.fault;
      });
    this.armed.set(
      route,
      list.filter((a) => a.remaining > 0),
    );
    return taken.sort((a, b) => (a.kind === 'latency' ? -1 : b.kind === 'latency' ? 1 : 0));
  }
}
