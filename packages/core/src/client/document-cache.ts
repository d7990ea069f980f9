import type { SignedDocumentUrl } from '../schemas/kyb.js';

interface Entry {
  value: Promise<SignedDocumentUrl>;
  expiresAt: number;
}

/**
 * Signed download URLs by document path, reused until shortly before `expiresIn` runs out.
 * Concurrent requests for one document share a single fetch; the map is bounded (oldest out).
 */
export class SignedUrlCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached URL for `key`, or the result of `fetchUrl` (cached unless it fails). */
  get(key: string, fetchUrl: () => Promise<SignedDocumentUrl>): Promise<SignedDocumentUrl> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expiresAt > this.now()) return hit.value;
    const value = fetchUrl();
    // Pending fetches count as fresh so concurrent callers share them; the real expiry is set on arrival.
    const entry: Entry = { value, expiresAt: Number.POSITIVE_INFINITY };
    this.set(key, entry);
    value.then(
      (signed) => {
        entry.expiresAt = this.now() + usableLifetimeMs(signed.expiresIn);
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  /** Forgets `key` (after a download was refused as expired). */
  invalidate(key: string): void {
    this.entries.delete(key);
  }

  private set(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** Lifetime minus a safety margin (10%, at most 30 s) so a URL is never handed out about to die. */
export function usableLifetimeMs(expiresInSeconds: number): number {
  const lifetime = Math.max(0, expiresInSeconds * 1000);
  return lifetime - Math.min(30_000, lifetime * 0.1);
}
