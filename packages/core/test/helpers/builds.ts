import * as defaultBuild from '../../src/index.default.js';
import * as nodeBuild from '../../src/index.node.js';

/** Both builds, so every webhook test runs on node:crypto and on WebCrypto alike. */
export const builds = [
  ['node build (node:crypto)', nodeBuild],
  ['default build (WebCrypto)', defaultBuild],
] as const;

export type Build = (typeof builds)[number][1];
