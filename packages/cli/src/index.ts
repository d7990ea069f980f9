export { runVerikit, type VerikitIO } from './cli.js';
export { ExitCode, type ExitCodeName } from './exit-codes.js';
export { KEYS_VARIABLE, parseEncryptionKeys } from './keys.js';
