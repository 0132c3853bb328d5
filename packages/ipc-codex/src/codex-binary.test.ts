import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { BinaryHost } from "./codex-binary.js"
import {
  discoverCodexBinary,
  extensionPlatformDir,
  nodeBinaryHost,
  parseCodexVersion,
  probeCodexVersion,
} from "./codex-binary.js"

const host = (options: {
  env?: Record<string, string>
  files?: ReadonlyArray<string>
  platform?: NodeJS.Platform
  arch?: string
}): BinaryHost => {
  const files = new Set(options.files ?? [])
  return {
    env: options.env ?? {},
    homedir: "/home/u",
    platform: options.platform ?? "linux",
    arch: options.arch ?? "x64",
    isExecutableFile: (path) => Effect.succeed(files.has(path)),
    listDirectory: (dir) =>
      Effect.succeed([
        ...new Set(
          [...files]
            .filter((f) => f.startsWith(`${dir}/`))
            .map((f) => f.slice(dir.length + 1).split("/")[0]!),
        ),
      ]),
    readVersion: (path) => Effect.succeed(path.includes("26.1") ? "0.170.0" : "0.169.0"),
  }
}

const discover = (h: BinaryHost) => Effect.runPromise(Effect.result(discoverCodexBinary(h)))

describe("discoverCodexBinary", () => {
  test("BATON_CODEX_BINARY wins and says so", async () => {
    const result = await discover(
      host({
        env: { BATON_CODEX_BINARY: "/opt/codex", PATH: "/usr/bin" },
        files: ["/opt/codex", "/usr/bin/codex"],
      }),
    )
    expect(result._tag === "Success" && result.success).toEqual({
      path: "/opt/codex",
      source: "env",
      version: "0.169.0",
      reason: "BATON_CODEX_BINARY is set",
    })
  })

  test("a wrong BATON_CODEX_BINARY fails instead of falling back", async () => {
    const result = await discover(
      host({
        env: { BATON_CODEX_BINARY: "/opt/missing", PATH: "/usr/bin" },
        files: ["/usr/bin/codex"],
      }),
    )
    expect(result._tag === "Failure" && result.failure.message).toContain(
      "BATON_CODEX_BINARY=/opt/missing: not an executable file (no fallback while it is set)",
    )
  })

  test("then the first executable codex on PATH (relative entries skipped)", async () => {
    const result = await discover(
      host({ env: { PATH: "relative:/a:/b" }, files: ["relative/codex", "/b/codex"] }),
    )
    expect(result._tag === "Success" && result.success).toMatchObject({
      path: "/b/codex",
      source: "path",
    })
  })

  test("then the newest VS Code extension, preferring this platform's bin dir", async () => {
    const result = await discover(
      host({
        env: { PATH: "/usr/bin" },
        files: [
          "/home/u/.vscode/extensions/openai.chatgpt-0.4.9-linux-x64/bin/linux-x86_64/codex",
          "/home/u/.vscode/extensions/openai.chatgpt-26.1.0-linux-x64/bin/linux-x86_64/codex",
          "/home/u/.vscode-server/extensions/openai.chatgpt-25.9.3/bin/linux-x86_64/codex",
        ],
      }),
    )
    expect(result._tag === "Success" && result.success).toEqual({
      path: "/home/u/.vscode/extensions/openai.chatgpt-26.1.0-linux-x64/bin/linux-x86_64/codex",
      source: "vscode-extension",
      version: "0.170.0",
      reason: "newest VS Code extension openai.chatgpt-26.1.0 (no codex on PATH)",
    })
  })

  test("an extension without a runnable binary is reported and skipped", async () => {
    const result = await discover(
      host({
        env: {},
        files: [
          "/home/u/.vscode-server/extensions/openai.chatgpt-27.0.0/README.md",
          "/home/u/.vscode-server/extensions/openai.chatgpt-26.0.0/bin/macos-aarch64/codex",
        ],
        platform: "darwin",
        arch: "arm64",
      }),
    )
    expect(result._tag === "Success" && result.success.path).toBe(
      "/home/u/.vscode-server/extensions/openai.chatgpt-26.0.0/bin/macos-aarch64/codex",
    )
  })

  test("nothing found lists everything searched", async () => {
    const result = await discover(host({ env: { PATH: "/usr/bin" } }))
    expect(result._tag === "Failure" && result.failure.searched).toEqual([
      "PATH: no executable codex",
      "VS Code extensions: no openai.chatgpt-* under ~/{.vscode/extensions,.vscode-server/extensions,.vscode-insiders/extensions,.vscode-server-insiders/extensions}",
    ])
  })

  test("platform dirs and version parsing", () => {
    expect(extensionPlatformDir("linux", "x64")).toBe("linux-x86_64")
    expect(extensionPlatformDir("darwin", "arm64")).toBe("macos-aarch64")
    expect(extensionPlatformDir("win32", "x64")).toBe("windows-x86_64")
    expect(parseCodexVersion("codex-cli 0.169.0\n")).toBe("0.169.0")
    expect(parseCodexVersion("nothing")).toBeNull()
  })
})

describe.skipIf(process.platform === "win32")("probeCodexVersion (real processes)", () => {
  let dir = ""
  const script = async (name: string, body: string, mode = 0o755): Promise<string> => {
    const path = join(dir, name)
    await writeFile(path, `#!/bin/sh\n${body}\n`)
    await chmod(path, mode)
    return path
  }
  const probe = (path: string, timeoutMs = 5000) =>
    Effect.runPromise(probeCodexVersion(path, { timeoutMs }))

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "baton-codex-binary-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test("returns the first non-empty output line", async () => {
    const path = await script("v", "echo\necho 'codex-cli 0.169.0'\necho extra")
    expect(await probe(path)).toEqual({ _tag: "Version", text: "codex-cli 0.169.0" })
  })

  test("reports a non-zero exit, silence and a file it cannot run, without failing", async () => {
    expect(await probe(await script("bad", "echo broken >&2\nexit 3"))).toEqual({
      _tag: "Failed",
      reason: "exited with code 3: broken",
    })
    expect(await probe(await script("mute", "exit 0"))).toEqual({
      _tag: "Failed",
      reason: "printed nothing",
    })
    expect(await probe(await script("plain", "echo hi", 0o644))).toMatchObject({ _tag: "Failed" })
    expect(await probe(join(dir, "missing"))).toMatchObject({ _tag: "Failed" })
  })

  test("gives up after the timeout even when a grandchild keeps the pipes open", async () => {
    const path = await script("hang", "sleep 30 &\nsleep 30")
    const started = Date.now()
    expect(await probe(path, 300)).toEqual({ _tag: "TimedOut", afterMs: 300 })
    expect(Date.now() - started).toBeLessThan(3000)
  })

  test("nodeBinaryHost reads the parsed version through the same probe", async () => {
    const path = await script("codex", "echo 'codex-cli 1.2.3'")
    expect(await Effect.runPromise(nodeBinaryHost().readVersion(path))).toBe("1.2.3")
    expect(await Effect.runPromise(nodeBinaryHost().readVersion(join(dir, "missing")))).toBeNull()
  })
})
