import { ConfigurationError } from '../errors.js';

/** `value`, or `fallback` when it is undefined; anything but a whole number from 1 is a ConfigurationError naming `option`. */
export function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ConfigurationError(option, `${option} must be a positive integer`);
  return value;
}

/** `value`, or `fallback` when it is undefined; anything but a finite number above 0 is a ConfigurationError naming `option`. */
export function positiveNumber(option: string, value: number | undefined, fallback: number, unit = ''): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new ConfigurationError(option, `${option} must be a positive number${unit ? ` of ${unit}` : ''}`);
  return value;
}
