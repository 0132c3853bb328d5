import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codexVersion, locateCodex } from "./codex-binary.js"

let dir = ""
const script = async (name: string, body: string, mode = 0o755): Promise<string> => {
  const path = join(dir, name)
  await writeFile(path, `#!/bin/sh\n${body}\n`)
  await chmod(path, mode)
  return path
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "baton-codex-"))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe.skipIf(process.platform === "win32")("locateCodex", () => {
  it("prefers BATON_CODEX_BINARY and reports an unusable one", async () => {
    const good = await script("my-codex", "echo codex-cli 9.9.9")
    const notExecutable = await script("plain", "echo hi", 0o644)
    expect(await locateCodex({ BATON_CODEX_BINARY: good, PATH: "" })).toEqual({
      _tag: "Found",
      path: good,
      source: "BATON_CODEX_BINARY",
    })
    expect(await locateCodex({ BATON_CODEX_BINARY: notExecutable })).toMatchObject({
      _tag: "Unusable",
    })
    expect(await locateCodex({ BATON_CODEX_BINARY: join(dir, "nope") })).toMatchObject({
      _tag: "Unusable",
      reason: "no such file",
    })
  })

  it("searches PATH in order and skips directories without an executable codex", async () => {
    const bin = join(dir, "bin")
    await import("node:fs/promises").then((fs) => fs.mkdir(bin))
    const codex = join(bin, "codex")
    await writeFile(codex, "#!/bin/sh\necho codex-cli 1.2.3\n")
    await chmod(codex, 0o755)
    expect(await locateCodex({ PATH: [join(dir, "empty"), bin].join(":") })).toEqual({
      _tag: "Found",
      path: codex,
      source: "PATH",
    })
    expect(await locateCodex({ PATH: join(dir, "empty") })).toEqual({ _tag: "NotFound" })
  })
})

describe.skipIf(process.platform === "win32")("codexVersion", () => {
  it("returns the first output line", async () => {
    const path = await script("v", "echo\necho 'codex-cli 0.169.0'\necho extra")
    expect(await codexVersion(path, { timeoutMs: 5000 })).toEqual({
      _tag: "Version",
      text: "codex-cli 0.169.0",
    })
  })

  it("reports a non-zero exit", async () => {
    const path = await script("bad", "echo broken >&2\nexit 3")
    expect(await codexVersion(path, { timeoutMs: 5000 })).toEqual({
      _tag: "Failed",
      reason: "exited with code 3: broken",
    })
  })

  it("gives up after the timeout even when a grandchild keeps the pipes open", async () => {
    const path = await script("hang", "sleep 30 &\nsleep 30")
    const started = Date.now()
    expect(await codexVersion(path, { timeoutMs: 300 })).toEqual({ _tag: "TimedOut", afterMs: 300 })
    expect(Date.now() - started).toBeLessThan(3000)
  })
})
