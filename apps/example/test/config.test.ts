import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readMode } from '../src/config.js';

const run = promisify(execFile);
const appDir = fileURLToPath(new URL('..', import.meta.url));
const full = {
  VERIKIT_API_KEY: 'sk_live_1',
  VERIKIT_BASE_URL: 'https://api.example.test',
  VERIKIT_WEB_URL: 'https://verify.example.test',
  VERIKIT_PUBLIC_KEY: 'pk_1',
  VERIKIT_WEBHOOK_SECRET: 'whsec_plJ3nmyCDGBKInavdOK15jsl',
};

describe('mode from the environment', () => {
  it('no VERIKIT_* variable -> the embedded fake service', () => {
    expect(readMode({})).toEqual({ kind: 'embedded' });
  });

  it('all five -> the real service', () => {
    expect(readMode(full)).toMatchObject({ kind: 'real', client: { baseUrl: 'https://api.example.test' } });
  });

  it.each([
    [{ ...full, VERIKIT_PUBLIC_KEY: undefined }, /VERIKIT_PUBLIC_KEY is not set/],
    [{ VERIKIT_API_KEY: 'k' }, /VERIKIT_BASE_URL, VERIKIT_WEB_URL, VERIKIT_PUBLIC_KEY, VERIKIT_WEBHOOK_SECRET are not set/],
    [{ ...full, VERIKIT_BASE_URL: 'not a url' }, /VERIKIT_BASE_URL is not a valid URL/],
    [{ ...full, VERIKIT_WEBHOOK_SECRET: 'whsec_not base64' }, /VERIKIT_WEBHOOK_SECRET/],
  ])('%j -> one line naming the variable', (env, message) => {
    expect(() => readMode(env)).toThrow(message);
  });
});

describe('the main command', () => {
  it('a malformed variable gets one clear line, not a stack trace', async () => {
    const error = await run(process.execPath, ['dist/main.js'], {
      cwd: appDir,
      env: { ...process.env, ...full, VERIKIT_BASE_URL: 'ftp://x' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 1 });
    const lines = (error as { stderr: string }).stderr.trim().split('\n');
    expect(lines).toEqual(['verikit example: VERIKIT_BASE_URL must use http or https, not ftp:']);
  });

  it('a port in use gets one clear line', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    const error = await run(process.execPath, ['dist/main.js'], { cwd: appDir, env: { ...process.env, PORT: String(port) } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    blocker.close();
    expect((error as { stderr: string }).stderr.trim()).toBe(
      `verikit example: port ${port} is in use; set PORT to another one (PORT=0 picks a free port)`,
    );
  });
});
