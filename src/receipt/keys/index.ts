/** Ed25519 engine keys: generation, operator-supplied keys, and the owner-only key file. */
export type { EngineKey } from './engineKey.js';
export { generateEngineKey, engineKeyFromPrivateKey } from './engineKey.js';
export { parsePrivateKey, formatPrivateKey } from './privateKey.js';
export { loadEngineKeyFile, loadOrCreateEngineKey, KEY_FILE_MODE, KEY_DIR_MODE } from './keyFile.js';
