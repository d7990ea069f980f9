import { type Browser, chromium } from 'playwright-core';
import { launchChromium as launchWith } from '../../../../test-support/chromium.js';

/** Debian's Chromium under Playwright, as every browser test of the repository launches it. */
export const launchChromium = (): Promise<Browser> => launchWith(chromium);
