import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import type { Server } from "node:net"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import type { SocketFileSystem } from "./socket-trust.js"
import { nodeSocketFileSystem, verifyDaemonSocket } from "./socket-trust.js"

let root = ""
let controlDir = ""
let daemonDir = ""
let realSocket = ""
let link = ""
let server: Server | null = null

const listen = (path: string) =>
  new Promise<Server>((resolve) => {
    const s = createServer()
    s.listen(path, () => resolve(s))
  })

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "baton-trust-"))
  controlDir = join(root, "codex-home", "app-server-control")
  daemonDir = join(root, "codex-daemon-uid")
  await mkdir(controlDir, { recursive: true, mode: 0o700 })
  await mkdir(daemonDir, { mode: 0o700 })
  await chmod(controlDir, 0o700)
  realSocket = join(daemonDir, "abc123")
  server = await listen(realSocket)
  await chmod(realSocket, 0o600)
  link = join(controlDir, "app-server-control.sock")
  await symlink(realSocket, link)
})

afterEach(async () => {
  await new Promise((r) => (server === null ? r(null) : server.close(r)))
  await rm(root, { recursive: true, force: true })
})

const verify = (fs: SocketFileSystem = nodeSocketFileSystem(), path = link) =>
  Effect.runPromise(Effect.result(verifyDaemonSocket(path, fs)))

/** The real file system, except that `paths` appear owned by another uid. */
const foreignOwner = (...paths: ReadonlyArray<string>): SocketFileSystem => {
  const real = nodeSocketFileSystem()
  const disguise = (path: string) =>
    Effect.map(real.lstat(path), (f) =>
      f !== null && paths.includes(path) ? { ...f, uid: f.uid + 1000 } : f,
    )
  return {
    ...real,
    lstat: disguise,
    stat: (path) =>
      Effect.map(real.stat(path), (f) =>
        f !== null && paths.includes(path) ? { ...f, uid: f.uid + 1000 } : f,
      ),
  }
}

describe("verifyDaemonSocket", () => {
  test("a private link into a private socket directory is trusted; the real socket is the target", async () => {
    const result = await verify()
    expect(result._tag).toBe("Success")
    if (result._tag === "Success") {
      expect(result.success.target).toBe(realSocket)
      expect(result.success.checks).toHaveLength(4)
    }
  })

  test.each([
    ["the link", () => [link], "socket link is owned by uid"],
    ["the real socket", () => [realSocket], "socket is owned by uid"],
    ["the socket directory", () => [daemonDir], "socket directory is owned by uid"],
    ["the control directory", () => [controlDir], "control directory is owned by uid"],
  ] as const)("refuses when %s belongs to another user", async (_what, paths, reason) => {
    const result = await verify(foreignOwner(...paths()))
    expect(result._tag).toBe("Failure")
    if (result._tag === "Failure") {
      expect(result.failure._tag).toBe("SocketTrustError")
      expect(result.failure.message).toContain(reason)
    }
  })

  test.each([
    ["socket", () => realSocket, 0o666],
    ["socket directory", () => daemonDir, 0o755],
    ["control directory", () => controlDir, 0o750],
  ] as const)(
    "refuses a %s with group/other permissions (real chmod)",
    async (role, path, mode) => {
      await chmod(path(), mode)
      const result = await verify()
      expect(result._tag).toBe("Failure")
      if (result._tag === "Failure") {
        expect(result.failure).toMatchObject({ _tag: "SocketTrustError", path: path() })
        expect(result.failure.message).toContain(
          `${role} has group/other permissions (mode 0${mode.toString(8)})`,
        )
      }
    },
  )

  test("refuses a link pointing at a socket in a shared directory", async () => {
    const shared = join(root, "shared-tmp")
    await mkdir(shared)
    await chmod(shared, 0o1777)
    const elsewhere = join(shared, "someone-elses.sock")
    const other = await listen(elsewhere)
    await chmod(elsewhere, 0o600)
    await rm(link)
    await symlink(elsewhere, link)
    const result = await verify()
    await new Promise((r) => other.close(r))
    expect(result._tag).toBe("Failure")
    if (result._tag === "Failure")
      expect(result.failure.message).toContain("socket directory has group/other permissions")
  })

  test("refuses a link pointing at something that is not a socket", async () => {
    const file = join(daemonDir, "not-a-socket")
    await writeFile(file, "x", { mode: 0o600 })
    await rm(link)
    await symlink(file, link)
    const result = await verify()
    expect(result._tag === "Failure" && result.failure.message).toContain(
      "is a file, expected a socket",
    )
  })

  test("a socket path that is a directory or a file says so, whatever its directory's mode", async () => {
    const shared = join(root, "shared")
    await mkdir(join(shared, "dir.sock"), { recursive: true, mode: 0o700 })
    await writeFile(join(shared, "file.sock"), "x", { mode: 0o600 })
    await chmod(shared, 0o755)
    for (const [name, kind] of [
      ["dir.sock", "directory"],
      ["file.sock", "file"],
    ] as const) {
      const path = join(shared, name)
      const result = await verify(nodeSocketFileSystem(), path)
      expect(result._tag === "Failure" && result.failure).toMatchObject({
        _tag: "SocketTrustError",
        path,
        reason: expect.stringContaining(`it is a ${kind}, not a socket`),
      })
    }
  })

  test("a missing socket says the daemon is not running", async () => {
    await rm(link)
    const result = await verify()
    expect(result._tag === "Failure" && result.failure._tag).toBe("DaemonNotRunningError")
    expect(result._tag === "Failure" && result.failure.message).toContain(
      "codex app-server daemon start",
    )
  })

  test("a missing control directory says the daemon is not running", async () => {
    const result = await verify(
      nodeSocketFileSystem(),
      join(root, "nowhere", "app-server-control", "app-server-control.sock"),
    )
    expect(result._tag === "Failure" && result.failure._tag).toBe("DaemonNotRunningError")
  })

  test("a dangling link says the daemon is not running (never a fallback)", async () => {
    await rm(link)
    await symlink(join(daemonDir, "gone"), link)
    const result = await verify()
    expect(result._tag === "Failure" && result.failure).toMatchObject({
      _tag: "DaemonNotRunningError",
      reason: expect.stringContaining("stale link"),
    })
  })
})
