// What a README fragment (a ```ts block that is not a whole program) takes from the reader's own
// code: their framework's request, app, database clients, options and earlier snippets. Declared
// here with the types a real project would have, so each fragment is type-checked as written.
import type { IncomingMessage } from 'node:http';
import type { DocumentRef, IdempotencyStore, InboxEngine, LedgerEngine, VerikitClient, WebhookContext } from '@verikit/core';
import type { Queryable as PostgresQueryable } from '@verikit/postgres';
import type { FakeService } from '@verikit/testing';
import type { Express, Request as ExpressRequest } from 'express';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';

declare global {
  /** The incoming request, in a Node framework. */
  const req: IncomingMessage;
  /** Its raw body bytes, as the framework kept them. */
  const rawBody: Buffer;
  const app: Express;
  const express: typeof import('express');
  const pool: Pool;
  const redis: Redis;
  const client: VerikitClient;
  const apiKey: string;
  const baseUrl: string;
  const secret: string;
  const store: IdempotencyStore;
  const inbox: InboxEngine;
  /** A ledger on the reader's database (`createPostgresLedger({ db: pool })`). */
  const ledger: LedgerEngine<PostgresQueryable>;
  const onEvent: (ctx: WebhookContext) => Promise<void>;
  const fake: FakeService;
  /** The reader's own lookup of a signed-in business's document. */
  const ownDocument: (req: ExpressRequest) => Promise<DocumentRef>;
  // Imported by an earlier snippet of the same README.
  const createClient: typeof import('@verikit/core').createClient;
  const createWebhookHandler: typeof import('@verikit/core').createWebhookHandler;
  const createInboxWorker: typeof import('@verikit/core').createInboxWorker;
  const createReconciler: typeof import('@verikit/core').createReconciler;
  const checkHealth: typeof import('@verikit/core').checkHealth;
  const healthResponse: typeof import('@verikit/core').healthResponse;
  type LedgerChangeContext<Tx> = import('@verikit/core').LedgerChangeContext<Tx>;
  type Queryable = PostgresQueryable;
  const verikitRouter: typeof import('@verikit/express').verikitRouter;
  /** Deno's server, where the snippet runs on Deno. */
  const Deno: { serve(handler: (request: Request) => Response | Promise<Response>): unknown };
}
