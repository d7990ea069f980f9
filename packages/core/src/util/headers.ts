/** Request headers as a plain object (any case; Node's `req.headers` works) or a Fetch `Headers`. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A header's raw value by lower-case name, from either form; repeated headers may come as an array. */
export function rawHeader(headers: HeaderSource, name: string): string | readonly string[] | undefined {
  // Node's lower-cased `req.headers` is the common case: one property read answers it.
  const exact = (headers as Readonly<Record<string, unknown>>)[name];
  if (typeof exact === 'string' || Array.isArray(exact)) return exact;
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  for (const key in record) {
    if (key.length === name.length && key.toLowerCase() === name) return record[key];
  }
  return undefined;
}

/** Whether an HTTP method is POST, in any case (without allocating for the usual upper-case one). */
export function isPost(method: unknown): boolean {
  return method === 'POST' || (typeof method === 'string' && method.toUpperCase() === 'POST');
}
