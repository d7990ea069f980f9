import { ConfigurationError } from '../errors.js';
import { type BodyLimits, type BodyRead, type BodyStream, isWebStream, readWebBody } from './read-body.js';

/**
 * The route reader outside Node's build (Workers, Bun, Deno): Web streams only, so a Worker bundles
 * no Node stream code. A Node readable here must come with its reader (`read: readNodeBody`), as
 * the Express and Fastify adapters hand it over.
 */
export const readWebStreamBody = (source: BodyStream | null | undefined, limits: BodyLimits): Promise<BodyRead> =>
  source === null || source === undefined || isWebStream(source)
    ? readWebBody(source, limits)
    : Promise.reject(new ConfigurationError('body', 'a Node stream body needs read: readNodeBody here'));
