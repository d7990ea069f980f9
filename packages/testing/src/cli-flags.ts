// The numbers `verikit-fake` takes, read strictly: decimal digits only, since Number() would also
// take '', '1e3', '0x10' and ' 80'. A bad one throws an Error whose message names the flag.

/** `text` as a decimal integer within [min, max]. */
export function decimalInteger(flag: string, text: string, range: { min: number; max: number; what: string }): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= range.min && value <= range.max)) throw new Error(`${flag} must be a ${range.what}, not ${JSON.stringify(text)}`);
  return value;
}

/** `text` as a share from 0 to 1, written as a decimal (`0`, `0.3`, `1`). */
export function share(flag: string, text: string): number {
  const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= 1)) throw new Error(`${flag} must be a decimal from 0 to 1, not ${JSON.stringify(text)}`);
  return value;
}

/** `text` as `MIN-MAX` milliseconds, decimal integers with MIN <= MAX. */
export function msRange(flag: string, text: string): { min: number; max: number } {
  const match = /^(\d{1,9})-(\d{1,9})$/.exec(text);
  const [min, max] = match ? [Number(match[1]), Number(match[2])] : [Number.NaN, Number.NaN];
  if (!(min <= max)) throw new Error(`${flag} must be MIN-MAX in decimal ms with MIN <= MAX, not ${JSON.stringify(text)}`);
  return { min, max };
}
