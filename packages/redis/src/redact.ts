/**
 * ioredis hangs a failed command's arguments on its error (`command: { name, args }`): for BullMQ's
 * scripts and verikit's, the webhook body, the writes of `ctx.sql` and the whole Lua text. Keeps
 * only the command's name, on the error and on the errors it carries (`cause`, a Cluster's
 * `lastNodeError`, `previousErrors`), so no log line and no error handed to core holds them.
 */
export function withoutCommandArgs<E>(error: E, depth = 0): E {
  if (error === null || typeof error !== 'object' || depth > 4) return error;
  const carrier = error as { command?: unknown; cause?: unknown; lastNodeError?: unknown; previousErrors?: unknown };
  const command = carrier.command as { name?: unknown; args?: unknown } | undefined;
  if (command !== null && typeof command === 'object' && 'args' in command) carrier.command = { name: command.name };
  withoutCommandArgs(carrier.cause, depth + 1);
  withoutCommandArgs(carrier.lastNodeError, depth + 1);
  if (Array.isArray(carrier.previousErrors)) for (const inner of carrier.previousErrors) withoutCommandArgs(inner, depth + 1);
  return error;
}

/**
 * `methods` with every rejection passed through {@link withoutCommandArgs}: the store's and the
 * inbox's methods are where Redis errors leave this package, for core to log or for the caller.
 */
export function redactingErrors<T extends object>(methods: T): T {
  const redacted = { ...methods } as Record<string, unknown>;
  for (const [name, method] of Object.entries(methods)) {
    if (typeof method !== 'function') continue;
    redacted[name] = async (...args: unknown[]) => {
      try {
        return await (method as (...args: unknown[]) => unknown).apply(methods, args);
      } catch (error) {
        throw withoutCommandArgs(error);
      }
    };
  }
  return redacted as T;
}
