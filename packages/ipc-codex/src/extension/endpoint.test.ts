import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { IpcFileSystem, resolveExtensionEndpoint, WINDOWS_PIPE_PATH } from "./endpoint.js"
import type { EndpointEnvironment, IpcFileStat, IpcFsFailure } from "./endpoint.js"

const UID = 501

/** An in-memory filesystem: path → entry or errno; records every call. */
const fakeFs = (
  entries: Record<string, Partial<IpcFileStat> | string>,
  links: Record<string, string> = {},
) => {
  const calls: Array<string> = []
  const entry = (call: string, p: string): Effect.Effect<IpcFileStat, IpcFsFailure> => {
    calls.push(`${call} ${p}`)
    const found = entries[p]
    if (found === undefined) return Effect.fail({ _tag: "IpcFsFailure", code: "ENOENT", path: p })
    if (typeof found === "string")
      return Effect.fail({ _tag: "IpcFsFailure", code: found, path: p })
    return Effect.succeed({
      kind: "directory",
      uid: UID,
      mode: 0o40700,
      dev: 1,
      ino: 1,
      ...found,
    })
  }
  const service: IpcFileSystem["Service"] = {
    lstat: (p) => entry("lstat", p),
    stat: (p) => entry("stat", links[p] ?? p),
    realpath: (p) => {
      calls.push(`realpath ${p}`)
      return entries[links[p] ?? p] === undefined
        ? Effect.fail({ _tag: "IpcFsFailure", code: "ENOENT", path: p })
        : Effect.succeed(links[p] ?? p)
    },
  }
  return { service, calls }
}

const env = (overrides: Partial<EndpointEnvironment> = {}): EndpointEnvironment => ({
  platform: "linux",
  env: { CODEX_HOME: "/home/u/.codex" },
  homeDir: "/home/u",
  uid: UID,
  ...overrides,
})

const healthy: Record<string, Partial<IpcFileStat>> = {
  "/home/u/.codex": { kind: "directory", mode: 0o40755 },
  "/home/u/.codex/ipc": { kind: "directory", mode: 0o40700 },
  "/home/u/.codex/ipc/ipc.sock": { kind: "socket", mode: 0o140600, ino: 42 },
}

const resolve = (environment: EndpointEnvironment, fs: ReturnType<typeof fakeFs>) =>
  Effect.runPromise(
    resolveExtensionEndpoint(environment).pipe(
      Effect.provideService(IpcFileSystem, fs.service),
      Effect.result,
    ),
  )

const failureOf = async (environment: EndpointEnvironment, fs: ReturnType<typeof fakeFs>) => {
  const result = await resolve(environment, fs)
  if (result._tag === "Success") throw new Error("endpoint unexpectedly trusted")
  return result.failure
}

describe("resolveEndpoint", () => {
  it("accepts a private socket in a private directory owned by the user", async () => {
    const result = await resolve(env(), fakeFs(healthy))
    expect(result._tag === "Success" && result.success).toEqual({
      _tag: "UnixSocket",
      path: "/home/u/.codex/ipc/ipc.sock",
      directory: "/home/u/.codex/ipc",
      identity: { dev: 1, ino: 42 },
    })
  })

  it("defaults CODEX_HOME to ~/.codex", async () => {
    const result = await resolve(env({ env: {} }), fakeFs(healthy))
    expect(result._tag === "Success" && result.success.path).toBe("/home/u/.codex/ipc/ipc.sock")
  })

  it("resolves a symlinked CODEX_HOME to its real path before the checks", async () => {
    const fs = fakeFs(
      {
        "/data/codex": { kind: "directory" },
        "/data/codex/ipc": { kind: "directory" },
        "/data/codex/ipc/ipc.sock": { kind: "socket", mode: 0o600 },
      },
      { "/home/u/.codex": "/data/codex" },
    )
    const result = await resolve(env(), fs)
    expect(result._tag === "Success" && result.success.path).toBe("/data/codex/ipc/ipc.sock")
  })

  it("returns the Windows pipe without touching the filesystem", async () => {
    const fs = fakeFs({})
    const result = await resolve(env({ platform: "win32", uid: undefined }), fs)
    expect(result._tag === "Success" && result.success).toEqual({
      _tag: "WindowsPipe",
      path: WINDOWS_PIPE_PATH,
    })
    expect(fs.calls).toEqual([])
  })

  it("fails on an unsupported platform before any filesystem access", async () => {
    const fs = fakeFs(healthy)
    const error = await failureOf(env({ platform: "freebsd" }), fs)
    expect(error._tag).toBe("EndpointUnsupportedPlatformError")
    expect(error.message).toContain("freebsd")
    expect(fs.calls).toEqual([])
  })

  it("refuses a relative CODEX_HOME", async () => {
    const error = await failureOf(env({ env: { CODEX_HOME: "codex" } }), fakeFs(healthy))
    expect(error._tag).toBe("EndpointConfigError")
    expect(error.message).toContain("absolute")
  })

  it.each<[string, string, Partial<IpcFileStat>, string, RegExp]>([
    [
      "a foreign-owned directory",
      "/home/u/.codex/ipc",
      { kind: "directory", uid: 0, mode: 0o40700 },
      "EndpointOwnerError",
      /owned by uid 0, not by you \(uid 501\)/,
    ],
    [
      "a foreign-owned socket",
      "/home/u/.codex/ipc/ipc.sock",
      { kind: "socket", uid: 1000, mode: 0o140600 },
      "EndpointOwnerError",
      /uid 1000/,
    ],
    [
      "a 0755 directory",
      "/home/u/.codex/ipc",
      { kind: "directory", mode: 0o40755 },
      "EndpointPermissionError",
      /mode 0755.*chmod 700/,
    ],
    [
      "a 0770 directory",
      "/home/u/.codex/ipc",
      { kind: "directory", mode: 0o40770 },
      "EndpointPermissionError",
      /0770/,
    ],
    [
      "a 0666 socket",
      "/home/u/.codex/ipc/ipc.sock",
      { kind: "socket", mode: 0o140666 },
      "EndpointPermissionError",
      /0666.*chmod 600/,
    ],
    [
      "a 0640 socket",
      "/home/u/.codex/ipc/ipc.sock",
      { kind: "socket", mode: 0o140640 },
      "EndpointPermissionError",
      /0640/,
    ],
    [
      "a symlinked directory",
      "/home/u/.codex/ipc",
      { kind: "symlink" },
      "EndpointSymlinkError",
      /is a symlink/,
    ],
    [
      "a symlinked socket",
      "/home/u/.codex/ipc/ipc.sock",
      { kind: "symlink" },
      "EndpointSymlinkError",
      /ipc.sock \(socket\) is a symlink/,
    ],
    [
      "a regular file instead of the socket",
      "/home/u/.codex/ipc/ipc.sock",
      { kind: "file", mode: 0o100600 },
      "EndpointKindError",
      /is a file, expected a socket/,
    ],
    [
      "a file instead of the directory",
      "/home/u/.codex/ipc",
      { kind: "file", mode: 0o100600 },
      "EndpointKindError",
      /expected a directory/,
    ],
  ])("refuses %s", async (_name, path, stat, tag, message) => {
    const error = await failureOf(env(), fakeFs({ ...healthy, [path]: stat }))
    expect(error._tag).toBe(tag)
    expect(error.message).toMatch(message)
  })

  it("refuses a missing socket and never falls back to the temp dir", async () => {
    const { "/home/u/.codex/ipc/ipc.sock": _, ...withoutSocket } = healthy
    const fs = fakeFs({
      ...withoutSocket,
      "/tmp/codex-ipc": { kind: "directory" },
      "/tmp/codex-ipc/ipc-501.sock": { kind: "socket", mode: 0o600 },
    })
    const error = await failureOf(env({ tmpDir: "/tmp" }), fs)
    expect(error._tag).toBe("EndpointMissingError")
    expect(error.message).toContain("/home/u/.codex/ipc/ipc.sock")
    expect(error.message).toContain("VS Code")
    expect(fs.calls.some((c) => c.includes("/tmp"))).toBe(false)
  })

  it("refuses a missing CODEX_HOME or ipc directory as missing", async () => {
    expect((await failureOf(env(), fakeFs({})))._tag).toBe("EndpointMissingError")
    expect((await failureOf(env(), fakeFs({ "/home/u/.codex": { kind: "directory" } })))._tag).toBe(
      "EndpointMissingError",
    )
  })

  it("reports other filesystem errors as access errors", async () => {
    const error = await failureOf(
      env(),
      fakeFs({ ...healthy, "/home/u/.codex/ipc/ipc.sock": "EACCES" }),
    )
    expect(error._tag).toBe("EndpointAccessError")
    expect(error.message).toContain("EACCES")
  })

  describe("legacy temp socket (opt-in only)", () => {
    const { "/home/u/.codex/ipc/ipc.sock": _, ...withoutSocket } = healthy
    const legacyEnv = env({ tmpDir: "/tmp", allowLegacyTempSocket: true })

    it("accepts a private legacy socket when the primary is missing", async () => {
      const fs = fakeFs({
        ...withoutSocket,
        "/tmp/codex-ipc": { kind: "directory" },
        "/tmp/codex-ipc/ipc-501.sock": { kind: "socket", mode: 0o600 },
      })
      const result = await resolve(legacyEnv, fs)
      expect(result._tag === "Success" && result.success.path).toBe("/tmp/codex-ipc/ipc-501.sock")
    })

    it("refuses the shared 0755 /tmp/codex-ipc layout", async () => {
      const fs = fakeFs({
        ...withoutSocket,
        "/tmp/codex-ipc": { kind: "directory", mode: 0o40755 },
        "/tmp/codex-ipc/ipc-501.sock": { kind: "socket", mode: 0o600 },
      })
      expect((await failureOf(legacyEnv, fs))._tag).toBe("EndpointPermissionError")
    })

    it("names uid 0's legacy socket ipc.sock and lists both paths when both are missing", async () => {
      const rootOwned = Object.fromEntries(
        Object.entries(withoutSocket).map(([p, st]) => [p, { ...st, uid: 0 }]),
      )
      const error = await failureOf({ ...legacyEnv, uid: 0 }, fakeFs(rootOwned))
      expect(error._tag === "EndpointMissingError" && error.checked).toEqual([
        "/home/u/.codex/ipc/ipc.sock",
        "/tmp/codex-ipc/ipc.sock",
      ])
    })

    it("never uses the legacy socket while the primary exists but is untrusted", async () => {
      const fs = fakeFs({
        ...healthy,
        "/home/u/.codex/ipc/ipc.sock": { kind: "socket", mode: 0o777 },
        "/tmp/codex-ipc": { kind: "directory" },
        "/tmp/codex-ipc/ipc-501.sock": { kind: "socket", mode: 0o600 },
      })
      expect((await failureOf(legacyEnv, fs))._tag).toBe("EndpointPermissionError")
    })
  })
})
