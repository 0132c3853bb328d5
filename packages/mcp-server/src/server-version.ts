/**
 * The server's version: @baton/mcp-server's package.json version. Guarantees: read once,
 * synchronously, from the file next to `dist/`.
 */
import { readFileSync } from "node:fs"

/** The `version` field of @baton/mcp-server's package.json. */
export const serverVersion = (): string => {
  const manifest = JSON.parse(
    readFileSync(new URL("../package.json", import.meta.url), "utf8"),
  ) as {
    version?: unknown
  }
  return typeof manifest.version === "string" ? manifest.version : "0.0.0-unknown"
}
