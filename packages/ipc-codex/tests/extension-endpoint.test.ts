/**
 * Endpoint trust checks on the real filesystem (temp dirs, chmod, symlinks, a real listening
 * socket) and, for ownership (tests run as root), the real filesystem seen through an
 * injected uid. Every refusal must be a tagged error with an actionable message; nothing may
 * ever fall back to another socket.
 */
import { Effect } from "effect"
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import type { Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { IpcFileSystem, nodeIpcFileSystem, resolveExtensionEndpoint } from "@baton/ipc-codex"
import type { EndpointEnvironment } from "@baton/ipc-codex"

const uid = typeof process.getuid === "function" ? process.getuid() : 0

let root = ""
let server: Server | undefined
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-endpoint-"))
})
afterEach(async () => {
  const s = server
  server = undefined
  if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()))
  await rm(root, { recursive: true, force: true })
})

const listen = async (path: string) => {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(path, resolve))
  server = s
}

/** A CODEX_HOME with a private ipc dir and a listening 0600 socket. */
const healthyHome = async (name = "home") => {
  const home = join(root, name)
  await mkdir(join(home, "ipc"), { recursive: true })
  await chmod(join(home, "ipc"), 0o700)
  await listen(join(home, "ipc", "ipc.sock"))
  await chmod(join(home, "ipc", "ipc.sock"), 0o600)
  return home
}

const environment = (
  home: string,
  extra: Partial<EndpointEnvironment> = {},
): EndpointEnvironment => ({
  platform: "linux",
  env: { CODEX_HOME: home },
  homeDir: "/nonexistent",
  uid,
  ...extra,
})

const resolveWith = (env: EndpointEnvironment, fs: IpcFileSystem["Service"] = nodeIpcFileSystem) =>
  Effect.runPromise(
    resolveExtensionEndpoint(env).pipe(Effect.provideService(IpcFileSystem, fs), Effect.result),
  )

const refusal = async (env: EndpointEnvironment, fs?: IpcFileSystem["Service"]) => {
  const result = await resolveWith(env, fs)
  if (result._tag === "Success") throw new Error(`unexpectedly trusted ${result.success.path}`)
  return result.failure
}

describe.skipIf(process.platform === "win32")("endpoint trust on the real filesystem", () => {
  it("trusts a private socket in a private directory and records its inode", async () => {
    const home = await healthyHome()
    const result = await resolveWith(environment(home))
    expect(result._tag === "Success" && result.success._tag).toBe("UnixSocket")
    expect(result._tag === "Success" && result.success.path).toBe(join(home, "ipc", "ipc.sock"))
    expect(
      result._tag === "Success" &&
        result.success._tag === "UnixSocket" &&
        result.success.identity.ino,
    ).toBeGreaterThan(0)
  })

  it.each([
    ["directory 0755", "ipc", 0o755, "EndpointPermissionError", /mode 0755.*chmod 700/],
    ["directory 0770", "ipc", 0o770, "EndpointPermissionError", /mode 0770/],
    ["socket 0666", "ipc/ipc.sock", 0o666, "EndpointPermissionError", /mode 0666.*chmod 600/],
    ["socket 0640", "ipc/ipc.sock", 0o640, "EndpointPermissionError", /mode 0640/],
  ])("refuses a %s", async (_name, relative, mode, tag, message) => {
    const home = await healthyHome()
    await chmod(join(home, relative), mode)
    const error = await refusal(environment(home))
    expect(error._tag).toBe(tag)
    expect(error.message).toMatch(message)
  })

  it("refuses a symlinked socket even when its target is a good socket", async () => {
    const good = await healthyHome("good")
    const home = join(root, "linked")
    await mkdir(join(home, "ipc"), { recursive: true })
    await chmod(join(home, "ipc"), 0o700)
    await symlink(join(good, "ipc", "ipc.sock"), join(home, "ipc", "ipc.sock"))
    const error = await refusal(environment(home))
    expect(error._tag).toBe("EndpointSymlinkError")
    expect(error.message).toContain("is a symlink")
  })

  it("refuses a symlinked ipc directory", async () => {
    const good = await healthyHome("good")
    const home = join(root, "linked")
    await mkdir(home)
    await symlink(join(good, "ipc"), join(home, "ipc"))
    expect((await refusal(environment(home)))._tag).toBe("EndpointSymlinkError")
  })

  it("follows a symlinked CODEX_HOME to its real directory", async () => {
    const good = await healthyHome("good")
    await symlink(good, join(root, "alias"))
    const result = await resolveWith(environment(join(root, "alias")))
    expect(result._tag === "Success" && result.success.path).toBe(join(good, "ipc", "ipc.sock"))
  })

  it("refuses a regular file in place of the socket", async () => {
    const home = join(root, "home")
    await mkdir(join(home, "ipc"), { recursive: true })
    await chmod(join(home, "ipc"), 0o700)
    await writeFile(join(home, "ipc", "ipc.sock"), "", { mode: 0o600 })
    const error = await refusal(environment(home))
    expect(error._tag).toBe("EndpointKindError")
    expect(error.message).toContain("is a file, expected a socket")
  })

  it("refuses a missing socket and never falls back to the shared temp socket", async () => {
    const home = join(root, "home")
    await mkdir(join(home, "ipc"), { recursive: true })
    await chmod(join(home, "ipc"), 0o700)
    const legacyDir = join(root, "tmp", "codex-ipc")
    await mkdir(legacyDir, { recursive: true })
    await chmod(legacyDir, 0o700)
    await listen(join(legacyDir, uid === 0 ? "ipc.sock" : `ipc-${uid}.sock`))
    const error = await refusal(environment(home, { tmpDir: join(root, "tmp") }))
    expect(error._tag).toBe("EndpointMissingError")
    expect(error.message).toContain(join(home, "ipc", "ipc.sock"))
    expect(error.message).not.toContain("codex-ipc")
  })

  it("uses a private legacy socket only when opted in, and refuses a shared 0755 one", async () => {
    const home = join(root, "home")
    await mkdir(home)
    const tmp = join(root, "tmp")
    const legacyDir = join(tmp, "codex-ipc")
    await mkdir(legacyDir, { recursive: true })
    const socket = join(legacyDir, uid === 0 ? "ipc.sock" : `ipc-${uid}.sock`)
    await listen(socket)
    await chmod(socket, 0o600)
    await chmod(legacyDir, 0o755)
    const shared = await refusal(environment(home, { tmpDir: tmp, allowLegacyTempSocket: true }))
    expect(shared._tag).toBe("EndpointPermissionError")
    await chmod(legacyDir, 0o700)
    const result = await resolveWith(
      environment(home, { tmpDir: tmp, allowLegacyTempSocket: true }),
    )
    expect(result._tag === "Success" && result.success.path).toBe(socket)
  })

  it.each([
    ["the ipc directory", "ipc"],
    ["the socket", "ipc/ipc.sock"],
  ])("refuses %s owned by another user", async (_name, relative) => {
    const home = await healthyHome()
    const foreign = join(home, relative)
    const asOtherOwner: IpcFileSystem["Service"] = {
      ...nodeIpcFileSystem,
      lstat: (p) =>
        nodeIpcFileSystem
          .lstat(p)
          .pipe(Effect.map((st) => (p === foreign ? { ...st, uid: uid + 1000 } : st))),
    }
    const error = await refusal(environment(home), asOtherOwner)
    expect(error._tag).toBe("EndpointOwnerError")
    expect(error.message).toContain(`owned by uid ${uid + 1000}, not by you (uid ${uid})`)
  })
})
