// Makes sure Debian's Chromium is there for the example's browser test (Playwright cannot download
// its own browser on these machines). Installs it with apt when missing and possible; otherwise says how.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (existsSync(CHROMIUM)) process.exit(0);

const canApt =
  process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0 && existsSync('/usr/bin/apt-get');
if (!canApt) {
  console.error(
    `ensure-browser: ${CHROMIUM} is missing; install Chromium (Debian: apt-get install chromium) or set CHROMIUM_PATH. The browser test will fail without it.`,
  );
  process.exit(0);
}
console.log('ensure-browser: installing Debian chromium for the browser test...');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
