/**
 * How many downloads each person may have running at once. Every download holds one of the API
 * client's connections, which invites and the webhook worker share: without a limit, one person
 * opening many large documents could take them all.
 */
export class DownloadLimit {
  private readonly running = new Map<string, number>();

  constructor(private readonly perPerson: number) {}

  /** A release function when `person` is under the limit (call it once the download ends), else undefined. */
  take(person: string): (() => void) | undefined {
    const count = this.running.get(person) ?? 0;
    if (count >= this.perPerson) return undefined;
    this.running.set(person, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(person) ?? 1) - 1;
      if (left === 0) this.running.delete(person);
      else this.running.set(person, left);
    };
  }
}
