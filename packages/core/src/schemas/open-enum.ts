import * as z from 'zod/mini';

/** A known string value, or any other string the service adds later. */
export type OpenEnum<T extends string> = T | (string & {});

/**
 * A string schema typed with its documented values but accepting any string, so a value the
 * service adds tomorrow passes through instead of breaking every integrator's parse.
 */
export function openEnum<const T extends readonly string[]>(_documented: T): z.ZodMiniType<OpenEnum<T[number]>> {
  return z.string() as z.ZodMiniType<OpenEnum<T[number]>>;
}
