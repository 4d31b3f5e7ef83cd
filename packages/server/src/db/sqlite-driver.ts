import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * better-sqlite3, in the version that runs on this Node.js. No single version runs on every Node
 * the project supports (package.json `engines`):
 * - 12.x aborts the process on Node 24 (a CHECK in `Statement::~Statement()` when V8 collects a
 *   statement), and the 12 line gets no fix;
 * - 13.x is built on Node-API 10, which Node 22.14 and later have; on Node 20 (Node-API 9) it
 *   crashes with a segmentation fault when it opens its first database.
 * So packages/server/package.json depends on both: `better-sqlite3` (13) and `better-sqlite3-12`,
 * the 12 line under another name, and this picks one by the Node-API version. Both have the same
 * JavaScript API. When Node 20 support is dropped, `better-sqlite3-12` and this file go.
 */
export const SQLITE_DRIVER_PACKAGE = Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-12';

// Both packages are CommonJS; `require` picks one without loading the other.
export const SqliteDriver = createRequire(import.meta.url)(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
