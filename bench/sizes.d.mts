/** A Worker `pnpm bench` sizes: its name, its code, and its budget in KB gzip where it has one. */
export declare const WORKERS: ReadonlyArray<{ name: string; code: string; budget?: number }>;
/** A Worker's size as wrangler would ship it: minified and gzip bytes, and the files bundled in. */
export declare function bundleSize(code: string): Promise<{ min: number; gzip: number; inputs: string[] }>;
/** Prints each Worker's minified and gzip size, with the budget where there is one. */
export declare function benchSizes(): Promise<void>;
