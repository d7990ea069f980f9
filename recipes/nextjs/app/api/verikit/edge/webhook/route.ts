import { verikitWebhook } from '../../../../../lib/verikit';

// The edge runtime gets @verikit/core's Web build (fetch and WebCrypto, no Node built-in).
export const runtime = 'edge';

/** POST /api/verikit/edge/webhook: the same handler on the edge runtime. */
export function POST(request: Request): Promise<Response> {
  return verikitWebhook()(request);
}
