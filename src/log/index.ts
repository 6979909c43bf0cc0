/** `src/log`: the engine log — one witnessed, tiled log of every session the engine opened and every checkpoint it signed. */
export { EngineLog } from './engine-log.js';
export type { EngineLogOptions, LogCheckpoint } from './engine-log.js';
export { readTile, tileBytes, tileWithin, exportTiles } from './tiles.js';
export type { TileResource } from './tiles.js';
export { loadLogKey, defaultLogOrigin, DEFAULT_LOG_KEY_PATH, LOG_KEY_ENV_VAR, LOG_ORIGIN_ENV_VAR } from './key.js';
export type { LoadLogKeyOptions } from './key.js';
export { verifyLogBinding, logBinding, findCheckpointLeaf, LOG_BINDING_CODES } from './binding.js';
export type { BoundCheckpoint, LogBindingCode, VerifyLogBindingOptions, VerifyLogBindingResult } from './binding.js';
export { monitorEngineLog } from './monitor.js';
export type { LogMonitorOptions, LogMonitorResult, LogMonitorRound, LogMonitorFailure, LogEvent, SessionEntriesSource } from './monitor.js';
export { logSource } from './source.js';
export type { LogSource } from './source.js';
export { LogReader, openLogCheckpoint } from './reader.js';
export type { HeldLogCheckpoint, ReadToResult } from './reader.js';
export { checkDayInLog, DAY_IN_LOG_CODES } from './day-in-log.js';
export type { CheckDayInLogOptions, CheckDayInLogResult, DayInLogCode } from './day-in-log.js';
