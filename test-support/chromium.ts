import { existsSync } from 'node:fs';

/** Where the system Chromium is (`CHROMIUM_PATH` overrides). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The part of playwright-core's `chromium` this uses: passed in, so this file needs no dependency of its own. */
export interface ChromiumLauncher<B> {
  launch(options: { executablePath: string; args: string[] }): Promise<B>;
}

/**
 * Launches the system Chromium headless with the flags a container needs. Never skipped: a missing
 * browser is a failure, with the fix in the message.
 */
export async function launchChromium<B>(chromium: ChromiumLauncher<B>): Promise<B> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: run \`apt-get install chromium\` (the root \`pnpm test\` does this when it can) or set CHROMIUM_PATH`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
