/** The version of `@verikit/core` this build was made from. */
export const VERSION: string = __VERIKIT_VERSION__;
