// Read calls on a current database never load Kysely: its ~260 ES modules cost ~0.2 s of a
// short-lived CLI call, and only the indexer and migrations use it. Checked in a child process
// whose module-loading hook records what it loads; the index pass at the end proves the hook sees
// Kysely when it is loaded.
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { openRecallDatabase } from "@baton/recall-index"
import { tempDir } from "./index-harness.js"

const child = fileURLToPath(new URL("./fixtures/read-path-modules.mjs", import.meta.url))
const dir = tempDir("module-loading")
afterAll(() => dir.dispose())

describe("module loading", () => {
  it("search, grep, recent and status leave Kysely unloaded; indexing loads it", async () => {
    const dataDir = join(dir.path, "data")
    // Create and migrate the database here, so the child opens a current one.
    await Effect.runPromise(Effect.scoped(openRecallDatabase({ dataDir })))
    const out = execFileSync(
      process.execPath,
      [child, dataDir, join(dir.path, "home"), join(dir.path, "loaded.txt")],
      { encoding: "utf8", cwd: fileURLToPath(new URL("..", import.meta.url)) },
    )
    const counts = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as {
      afterReads: number
      afterIndex: number
    }
    expect(counts.afterReads).toBe(0)
    expect(counts.afterIndex).toBeGreaterThan(100)
  })
})
