import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Every README.md a reader meets: the root's, each package's and each recipe's. */
export function readmeFiles(root: string): string[] {
  const inside = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, dir, entry.name, 'README.md')))
      .map((entry) => `${dir}/${entry.name}/README.md`)
      .sort();
  return ['README.md', ...inside('packages'), ...inside('recipes')];
}

/** A snippet to type-check: its file name (without extension) and its code. */
export interface Snippet {
  name: string;
  code: string;
}

/**
 * Type-checks `snippets` at once with the repo's strict settings, as a user's project would, against
 * the built packages: each written to `dir` as `<name>.mts`, with the declarations in `context`
 * (a .d.ts) when given. Throws with tsc's report.
 */
export async function typeCheck(dir: string, snippets: Snippet[], options: { context?: string } = {}): Promise<void> {
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
      files: options.context === undefined ? files : [options.context, ...files],
    }),
  );
  const tsc = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsc');
  await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch((error: { stdout?: string; message: string }) => {
    throw new Error(`README snippets do not type-check:\n${error.stdout || error.message}`);
  });
}

/** Type-checks whole programs (no context: they must stand alone) and compiles each to `<name>.mjs` for node; answers the paths. */
export async function checkAndCompile(dir: string, snippets: Snippet[]): Promise<string[]> {
  await typeCheck(dir, snippets);
  return Promise.all(
    snippets.map(async ({ name, code }) => {
      const { code: js } = await transform(code, { loader: 'ts', format: 'esm', target: 'node20' });
      const path = join(dir, `${name}.mjs`);
      writeFileSync(path, js);
      return path;
    }),
  );
}
