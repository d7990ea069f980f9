/** A Worker `pnpm bench` sizes: its name, the key of its figure in the JSON report, its code, and its budget in KB gzip where it has one. */
export declare const WORKERS: ReadonlyArray<{ name: string; key: string; code: string; budget?: number }>;
/** A Worker's size as wrangler would ship it: minified and gzip bytes, and the files bundled in. */
export declare function bundleSize(code: string): Promise<{ min: number; gzip: number; inputs: string[] }>;
/** Reports each Worker's gzip size (its minified size in the label), beside its budget where it has one. */
export declare function benchSizes(options?: { verbose?: boolean }): Promise<void>;
