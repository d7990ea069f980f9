/** Replaced at build time (tsup `define`) and in tests (vitest `define`) with package.json's version. */
declare const __VERIKIT_VERSION__: string;
