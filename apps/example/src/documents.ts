import { AbortedError, collectDocumentFiles, type KybDocumentFile, type KybDocumentStep, type VerikitClient } from '@verikit/core';
import { create as contentDisposition } from 'content-disposition';
import type { Request, RequestHandler, Response } from 'express';
import type { Account, Database } from './db.js';
import type { DownloadLimit } from './download-limit.js';

/** Types a browser shows without running anything of the file's own: only these are ever served inline. */
const INLINE_TYPES = new Set(['application/pdf', 'image/png', 'image/jpeg']);

/**
 * On every document, whatever its type: nothing may load, and the document runs sandboxed in an
 * origin of its own, so even a file a browser did render could not reach the app's cookies or pages.
 * (Chromium's PDF viewer and image view still work under it.)
 */
const DOCUMENT_CSP = "default-src 'none'; sandbox";

/** The headers a document is served with: its uploader chose its name, its type and its bytes. */
export function documentHeaders(
  file: Pick<KybDocumentFile, 'originalName' | 'mimeType'>,
  storageType: string | undefined,
  wanted: 'inline' | 'attachment',
): Record<string, string> {
  const type = (storageType ?? file.mimeType).split(';')[0]?.trim().toLowerCase() ?? '';
  const safe = INLINE_TYPES.has(type);
  return {
    'content-type': safe ? type : 'application/octet-stream',
    // RFC 6266: the name as typed in filename* (UTF-8), and an ASCII stand-in for old clients.
    'content-disposition': contentDisposition(file.originalName, {
      type: safe && wanted === 'inline' ? 'inline' : 'attachment',
      fallback: file.originalName.replace(/[^\x20-\x7e]/g, '_'),
    }),
    'content-security-policy': DOCUMENT_CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

/** What the document route needs from the app. */
export interface DocumentRouteOptions {
  client: VerikitClient;
  db: Database;
  account(req: Request): Promise<Account | undefined>;
  page(res: Response, status: number, title: string, message: string): void;
  limit: DownloadLimit;
}

/**
 * `GET /documents/:id`: a document of the signed-in business only, streamed through a fresh
 * signed URL, shown in the browser when its type is safe to show (or saved, with `?download=1`).
 * A visitor who goes away cancels the download at once, before or after storage answered.
 */
export function documentRoute({ client, db, account, page, limit }: DocumentRouteOptions): RequestHandler {
  return async (req, res, next) => {
    const who = await account(req);
    if (!who) return page(res, 401, 'Sign in first', 'Documents are shown to the business they belong to.');
    const details = (await db.kyb(who.businessRefId))?.details;
    const file = details?.steps
      .filter((s): s is KybDocumentStep => s.type === 'document')
      .flatMap((s) => collectDocumentFiles(s))
      .find((f) => f.id === req.params.id);
    if (!file) return page(res, 404, 'No such document', 'This business has no document with that id.');
    const release = limit.take(who.userRefId);
    if (!release) {
      res.set('retry-after', '5');
      return page(res, 429, 'Too many downloads at once', 'Let your other downloads finish, then try again.');
    }
    const gone = new AbortController();
    res.once('close', () => {
      release();
      gone.abort();
    });
    try {
      const download = await client.kyb.downloadDocument(file, { signal: gone.signal });
      res.set(documentHeaders(file, download.contentType, req.query.download === undefined ? 'inline' : 'attachment'));
      await download.writeTo(res);
    } catch (error) {
      // Only the visitor's leaving aborts: nothing to answer, nothing wrong. A transfer cut off upstream is logged.
      if (!(error instanceof AbortedError)) next(error);
    }
  };
}
