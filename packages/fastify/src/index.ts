import {
  createVerikitRoutes,
  type InviteHandler,
  type NodeReadableLike,
  readNodeBody,
  type VerikitClient,
  type VerikitRoutesOptions,
  webhookResponses,
} from '@verikit/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** Options of {@link verikitPlugin}; `prefix` is the registration's, as for any plugin. */
export type VerikitPluginOptions = VerikitRoutesOptions<FastifyRequest> & { prefix?: string };

declare module 'fastify' {
  interface FastifyInstance {
    /** The verikit API client of the first registration that gave one (undefined when none did). */
    verikit: VerikitClient | undefined;
  }
}

const RAW_BODY_FIX =
  'A hook read request.raw before verikit: leave the webhook body to verikit, or register the plugin in a scope without that hook.';

/**
 * Sends the answer and returns nothing: a handler's promise that resolved to the reply (itself a
 * thenable) would cost every request a thenable job and a call of `reply.then`, for nothing. What
 * fails goes, as Fastify sends a handler's rejection, to the scope's error handler (500).
 */
function send(reply: FastifyReply, answer: { status: number; headers: Record<string, string>; body: string }): void {
  try {
    reply
      .code(answer.status)
      .headers(answer.headers)
      .send(answer.body === '' ? undefined : answer.body);
  } catch (error) {
    reply.send(error);
  }
}

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const plugin: FastifyPluginAsync<VerikitPluginOptions> = async (fastify, options) => {
  const { prefix, ...routeOptions } = options;
  const routes = createVerikitRoutes(routeOptions, { rawBodyFix: RAW_BODY_FIX });
  // Several registrations (one per webhook endpoint) share the instance: decorate once, never clash.
  if (!fastify.hasDecorator('verikit')) fastify.decorate('verikit', options.client);
  else fastify.verikit ??= options.client;
  // The routes live in a child context: its body handling never reaches the host's routes.
  await fastify.register(
    async (scope: FastifyInstance) => {
      scope.removeAllContentTypeParsers();
      // The body stays on the wire: core reads it within the webhook route's size and time limits.
      scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
      scope.setErrorHandler((error: { statusCode?: number }, _req, reply) =>
        send(reply, (error.statusCode ?? 500) < 500 ? webhookResponses.badRequest() : webhookResponses.internalError()),
      );
      const webhook = routes.webhook;
      if (webhook) {
        scope.route({
          method: [...ALL_METHODS],
          url: '/webhook',
          // Returns nothing, sending from the chain: a promise handed back to Fastify would cost every
          // delivery one more promise and reaction (its check that the reply was sent).
          handler: (req, reply) => {
            webhook
              .receive({
                method: req.method,
                headers: req.headers,
                body: { kind: 'stream', stream: req.body as NodeReadableLike | undefined, read: readNodeBody },
              })
              .then(
                (answer) => send(reply, answer),
                (error: unknown) => reply.send(error),
              );
          },
        });
      }
      const invite = (url: string, handle: InviteHandler<FastifyRequest>) =>
        scope.route({
          method: [...ALL_METHODS],
          url,
          handler: async (req, reply) => {
            send(reply, await handle({ method: req.method, headers: req.headers, request: req }));
          },
        });
      if (routes.inviteKyb) invite('/invite/kyb', routes.inviteKyb);
      if (routes.inviteKyc) invite('/invite/kyc', routes.inviteKyc);
    },
    { prefix: prefix ?? '' },
  );
};

/**
 * A Fastify plugin with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc` under the
 * registration's `prefix`; decorates the instance with `verikit` (the client). Register it once per
 * webhook endpoint, each under its own prefix.
 * @example
 * await app.register(verikitPlugin, { prefix: '/verikit', client, webhook: { secret, store, onEvent } });
 */
export const verikitPlugin = fp(plugin, { name: '@verikit/fastify', fastify: '>=4.0.0' });
