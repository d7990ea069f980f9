import { createPayloadSealer, type EncryptionOptions, openUnsealed, PayloadSealError, type PayloadSealer } from '@verikit/core';

/** How the inbox keeps webhook bodies: as they are, or sealed under the `encryption` keys. */
export interface StoredPayloads {
  /** The sealer, when `encryption` is on. */
  sealer: PayloadSealer | undefined;
  /** The body of event `id` as stored: opened with the keys, or plain text as it is; a {@link PayloadSealError} when it cannot be. */
  open(stored: string, id: string): Promise<string>;
  /** The body a worker gets: opened, or `''` with the {@link PayloadSealError} that kept it shut (the worker fails the attempt with it). */
  forLease(stored: string, id: string): Promise<{ body: string; unreadable?: PayloadSealError }>;
}

/** The inbox's payloads for its `encryption` option (checked now: a bad key fails at creation). */
export function storedPayloads(encryption: EncryptionOptions | undefined): StoredPayloads {
  const sealer = createPayloadSealer(encryption);
  const open = async (stored: string, id: string): Promise<string> =>
    sealer === undefined ? openUnsealed(stored) : sealer.open(stored, id);
  return {
    sealer,
    open,
    async forLease(stored, id) {
      const opened = await unlessSealed(() => open(stored, id));
      return opened instanceof PayloadSealError ? { body: '', unreadable: opened } : { body: opened };
    },
  };
}

/** Runs `fn`, answering the {@link PayloadSealError} it throws instead of throwing it; other errors are thrown. */
export async function unlessSealed<T>(fn: () => Promise<T>): Promise<T | PayloadSealError> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof PayloadSealError) return error;
    throw error;
  }
}
