import { createVerikitRoutes, type InviteHandler, type VerikitClient, type VerikitRoutesOptions, webhookResponses } from '@verikit/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** Options of {@link verikitPlugin}; `prefix` is the registration's, as for any plugin. */
export type VerikitPluginOptions = VerikitRoutesOptions<FastifyRequest> & { prefix?: string };

declare module 'fastify' {
  interface FastifyInstance {
    /** The verikit API client given to the plugin (undefined when none was). */
    verikit: VerikitClient | undefined;
  }
}

function send(reply: FastifyReply, answer: { status: number; headers: Record<string, string>; body: string }): FastifyReply {
  return reply
    .code(answer.status)
    .headers(answer.headers)
    .send(answer.body === '' ? undefined : answer.body);
}

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const plugin: FastifyPluginAsync<VerikitPluginOptions> = async (fastify, options) => {
  const { prefix, ...routeOptions } = options;
  const routes = createVerikitRoutes(routeOptions);
  fastify.decorate('verikit', options.client);
  // The routes live in a child context: its raw-bytes parser never reaches the host's routes.
  await fastify.register(
    async (scope: FastifyInstance) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: routes.webhook?.maxBodyBytes }, (_req, body, done) =>
        done(null, body),
      );
      scope.setErrorHandler((error: { statusCode?: number }, _req, reply) => {
        if (error.statusCode === 413) return send(reply, webhookResponses.payloadTooLarge());
        throw error;
      });
      const webhook = routes.webhook;
      if (webhook) {
        scope.route({
          method: [...ALL_METHODS],
          url: '/webhook',
          handler: async (req, reply) =>
            send(reply, await webhook.handle({ method: req.method, headers: req.headers, body: req.body as Buffer | undefined })),
        });
      }
      const invite = (url: string, handle: InviteHandler<FastifyRequest>) =>
        scope.route({
          method: [...ALL_METHODS],
          url,
          handler: async (req, reply) => send(reply, await handle({ method: req.method, headers: req.headers, request: req })),
        });
      if (routes.inviteKyb) invite('/invite/kyb', routes.inviteKyb);
      if (routes.inviteKyc) invite('/invite/kyc', routes.inviteKyc);
    },
    { prefix: prefix ?? '' },
  );
};

/**
 * A Fastify plugin with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc` under the
 * registration's `prefix`; decorates the instance with `verikit` (the client).
 * @example
 * await app.register(verikitPlugin, { prefix: '/verikit', client, webhook: { secret, store, onEvent } });
 */
export const verikitPlugin = fp(plugin, { name: '@verikit/fastify', fastify: '>=4.0.0' });
