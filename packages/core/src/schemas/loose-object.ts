import * as z from 'zod/mini';
// Named imports from zod's core, not `z.core.*`: a namespace re-export keeps all of core (locales too) in a bundle.
import { $constructor, type $loose, type $ZodLooseShape, type $ZodObject, type $ZodObjectDef, $ZodObjectJIT } from 'zod/v4/core';

/**
 * zod/mini's object schema on the JIT-compiled object parser full zod uses. zod/mini's own object
 * interprets each parse, about four times the CPU for a case's details: the cost the Web build's
 * client would pay where code may be generated (Bun, Deno), and anyone parsing with these schemas,
 * while zod/mini keeps a Worker with the client under its size budget. On Node the client compiles
 * each schema whole (client/parsers-node.ts) and comes here only for an answer that fails that check.
 */
const JitObject = /* @__PURE__ */ $constructor('VerikitLooseObject', (inst: $ZodObject, def: $ZodObjectDef) => {
  $ZodObjectJIT.init(inst, def);
  (z.ZodMiniType.init as (inst: unknown, def: unknown) => void)(inst, def);
});

/** An object schema that keeps unknown keys (the service may add fields): zod/mini's `looseObject`, parsed by zod's JIT. */
// @__NO_SIDE_EFFECTS__
export function looseObject<const Shape extends $ZodLooseShape>(shape: Shape): z.ZodMiniObject<Shape, $loose> {
  return new JitObject({ type: 'object', shape, catchall: z.unknown() }) as unknown as z.ZodMiniObject<Shape, $loose>;
}
