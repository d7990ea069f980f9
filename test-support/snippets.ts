import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';

const run = promisify(execFile);

/** One fenced code block of a Markdown file. */
export interface CodeBlock {
  /** `ts`, `js`, `sh`, ... */
  lang: string;
  code: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

/** The fenced code blocks of `file` in `lang`, in order. */
export function codeBlocks(file: string, lang: string): CodeBlock[] {
  const text = readFileSync(file, 'utf8');
  const blocks: CodeBlock[] = [];
  for (const match of text.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)) {
    if (match[1] !== lang) continue;
    blocks.push({ lang, code: match[2] as string, line: text.slice(0, match.index).split('\n').length });
  }
  return blocks;
}

/** Programs (blocks that start with an import): what a reader copies whole, so each must type-check and run. */
export const programs = (blocks: CodeBlock[]): CodeBlock[] => blocks.filter((b) => /^import /.test(b.code));

/**
 * Writes each TypeScript block to `dir` as `<name>.mts`, type-checks them all at once with the
 * repo's strict settings (as a user's project would, against the built packages), and compiles
 * each to `<name>.mjs` for node. Returns the `.mjs` paths, or throws with tsc's report.
 */
export async function checkAndCompile(dir: string, snippets: Array<{ name: string; code: string }>): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files = snippets.map(({ name, code }) => {
    writeFileSync(join(dir, `${name}.mts`), code);
    return `${name}.mts`;
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
      files,
    }),
  );
  const tsc = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsc');
  await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch((error: { stdout?: string; message: string }) => {
    throw new Error(`README snippets do not type-check:\n${error.stdout || error.message}`);
  });
  return Promise.all(
    snippets.map(async ({ name, code }) => {
      const { code: js } = await transform(code, { loader: 'ts', format: 'esm', target: 'node20' });
      const path = join(dir, `${name}.mjs`);
      writeFileSync(path, js);
      return path;
    }),
  );
}
