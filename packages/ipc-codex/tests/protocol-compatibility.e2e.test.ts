// Regenerates the JSON schema from the installed pinned codex and compares the protocol surface
// Baton relies on with the committed baseline (src/generated/protocol-surface.json). A changed
// method or field fails with a readable diff; regenerate with `pnpm --filter @baton/ipc-codex generate`.
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, test } from "vitest"
import { resolveCodexBinary } from "@baton/testkit"
import type { ProtocolSurface } from "@baton/ipc-codex"
import {
  checkCompatibility,
  diffProtocolSurface,
  extractProtocolSurface,
  formatCompatibilityReport,
  generateSchemaBundle,
  probeCompatibility,
} from "@baton/ipc-codex"

const generated = fileURLToPath(new URL("../src/generated/", import.meta.url))
const dirs: Array<string> = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe("protocol compatibility of the pinned codex", () => {
  test("the schema the binary generates still has every method and field Baton uses", async () => {
    const binary = resolveCodexBinary()
    const baseline = JSON.parse(
      await readFile(join(generated, "protocol-surface.json"), "utf8"),
    ) as ProtocolSurface
    const source = JSON.parse(await readFile(join(generated, "source.json"), "utf8")) as {
      codexVersion: string
    }
    const surface = extractProtocolSurface(
      await Effect.runPromise(generateSchemaBundle(binary.native!)),
    )
    const diff = diffProtocolSurface(baseline, surface)
    const report = checkCompatibility(surface)
    const explanation = [
      `codex ${binary.version} vs the committed baseline from codex ${source.codexVersion}:`,
      ...diff,
      formatCompatibilityReport(report, `codex ${binary.version}`),
    ].join("\n")
    expect(diff, explanation).toEqual([])
    expect(report.ok, explanation).toBe(true)
  })

  test("probe results are cached by binary identity", async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), "baton-compat-cache-"))
    dirs.push(cacheDir)
    const binary = resolveCodexBinary().native!
    const first = await Effect.runPromise(probeCompatibility({ binary, cacheDir }))
    const second = await Effect.runPromise(probeCompatibility({ binary, cacheDir }))
    expect([first.fromCache, second.fromCache]).toEqual([false, true])
    expect(second.report.ok).toBe(true)
    expect(second.identity).toEqual(first.identity)
  })
})
