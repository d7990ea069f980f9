import { verikitWebhook } from '../../../../lib/verikit';

// Node.js runtime (Next's default for route handlers, said here for clarity).
export const runtime = 'nodejs';

/** POST /api/verikit/webhook: the raw request goes to verikit, which reads the exact bytes itself. */
export function POST(request: Request): Promise<Response> {
  return verikitWebhook()(request);
}
