/**
 * The CLI's own version, read from its package.json next to `dist/`. Guarantees: synchronous,
 * imports nothing beyond node:fs, so `baton --version` stays a cold-start-only cost.
 */
import { readFileSync } from "node:fs"

/** The `version` field of @baton/cli's package.json. */
export const readPackageVersion = (): string => {
  const manifest = JSON.parse(
    readFileSync(new URL("../package.json", import.meta.url), "utf8"),
  ) as {
    version?: unknown
  }
  return typeof manifest.version === "string" ? manifest.version : "0.0.0-unknown"
}
