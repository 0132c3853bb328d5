/**
 * Grep's time limits as plain numbers. Guarantees: imports nothing, so the CLI can print them in
 * its help (through `@baton/recall-index/grep-limits`) without loading the index, effect or
 * SQLite; the scan and the worker that runs a regular expression use these same constants.
 */

/** How long a grep scans by default (`maxScanMs`) before it stops with the matches found so far. */
export const GREP_SCAN_MS = 5_000

/** Time a grep worker is given to start (load its modules, open the database) on top of the scan budget. */
export const GREP_WORKER_STARTUP_MS = 3_000

/**
 * When a regular expression still running is stopped with an error, at the default scan budget:
 * the worker running it is given the scan budget plus its start-up time.
 */
export const GREP_REGEX_STOP_MS = GREP_SCAN_MS + GREP_WORKER_STARTUP_MS
