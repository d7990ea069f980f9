import { InvalidArgumentError } from '../errors.js';

/**
 * Encodes one path segment so a refId can never reach another route: `/`, `?`, `#`, spaces
 * and non-ASCII are percent-encoded. A refId of `.` or `..` is refused: URL parsing resolves
 * those dot segments even percent-encoded (`%2E%2E`), so no encoding keeps them in place.
 */
export function encodeSegment(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidArgumentError(`${name} must be a non-empty string`);
  if (value === '.' || value === '..')
    throw new InvalidArgumentError(`${name} "${value}" cannot be sent: URLs resolve it as a dot segment`);
  return encodeURIComponent(value);
}

/**
 * Resolves a document's `url` (an API path) against the API origin. An absolute URL on another
 * origin is refused: the call would send the API key to whoever that host is.
 */
export function resolveApiPath(fileUrl: unknown, origin: string, basePath: string): string {
  if (typeof fileUrl !== 'string' || fileUrl === '') throw new InvalidArgumentError('document url must be a non-empty string');
  let resolved: URL;
  try {
    resolved = new URL(fileUrl, `${origin}${basePath}/`);
  } catch {
    throw new InvalidArgumentError('document url is not a valid URL or path');
  }
  if (resolved.origin !== origin) {
    throw new InvalidArgumentError('document url points outside the API origin; refusing to send the API key there');
  }
  // Paths come back relative to the base URL; one already under the base path is not prefixed twice.
  const path = resolved.pathname + resolved.search;
  return basePath !== '' && path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : path;
}
