/** Replaced at build time (tsup `define`) and in tests (vitest `define`) with package.json's version. */
declare const __VERIKIT_VERSION__: string;
/** Replaced at build time (tsup `define`) and in tests (vitest `define`, false): whether this is the Web build. */
declare const __VERIKIT_WEB_BUILD__: boolean;
