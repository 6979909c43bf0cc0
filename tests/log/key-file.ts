/** Re-exports for the tiles tests: the engine log and a key file line. */
export { EngineLog } from '../../src/log/index.js';
import { formatPrivateKey, type EngineKey } from '../../src/receipt/index.js';
export const formatPrivateKeyLine = (k: EngineKey): string => formatPrivateKey(k);
