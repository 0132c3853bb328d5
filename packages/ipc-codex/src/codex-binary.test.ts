import { Effect } from "effect"
import { describe, expect, test } from "vitest"
import type { BinaryHost } from "./codex-binary.js"
import { discoverCodexBinary, extensionPlatformDir, parseCodexVersion } from "./codex-binary.js"

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
