// Data directory probe: the walk to the nearest existing directory, the real write attempt, and
// the sentence; then the Node adapter against the real disk.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { dataDirectoryProblem, probeDataDirectory } from "./data-directory-probe.js"
import type { DataDirectoryFileSystem, DataDirectoryPathKind } from "./data-directory-probe.js"
import { nodeDataDirectoryFileSystem } from "./node-data-directory-probe.js"

/** An in-memory file system: the kinds of a few paths, and which directories refuse writes. */
const memoryFs = (
  kinds: Readonly<Record<string, DataDirectoryPathKind>>,
  refuse: { readonly access?: Record<string, string>; readonly create?: Record<string, string> },
): DataDirectoryFileSystem & { readonly created: Array<string> } => {
  const created: Array<string> = []
  return {
    created,
    kind: (path) => Promise.resolve(kinds[path] ?? { _tag: "Missing" }),
    checkWritable: (path) => Promise.resolve(refuse.access?.[path]),
    tryCreateDirectoryIn: (path) => {
      created.push(path)
      return Promise.resolve(refuse.create?.[path])
    },
  }
}

const dir = { _tag: "Directory" } as const

describe("probeDataDirectory", () => {
  it("finds the nearest existing directory and tries a write there", async () => {
    const fs = memoryFs({ "/": dir, "/home": dir }, {})
    expect(await probeDataDirectory("/home/me/.local/share/baton", fs)).toEqual({
      _tag: "Usable",
      path: "/home/me/.local/share/baton",
      ancestor: "/home",
    })
    expect(fs.created).toEqual(["/home"])
  })

  it("refuses a directory access allows but a real create refuses (root on a read-only file system)", async () => {
    const fs = memoryFs({ "/": dir, "/sys": dir }, { create: { "/sys": "EPERM" } })
    const probe = await probeDataDirectory("/sys/baton", fs)
    expect(probe).toMatchObject({
      _tag: "Unusable",
      exists: false,
      blocker: "/sys",
      blockedBy: "not-writable",
      reason: "EPERM",
    })
    expect(dataDirectoryProblem(probe)).toBe(
      "the recall index directory /sys/baton does not exist and cannot be created: /sys is not " +
        "writable by this user (EPERM); set BATON_DATA_DIR to a directory you can write " +
        "(default: $XDG_DATA_HOME/baton, else ~/.local/share/baton), or make /sys writable for " +
        "this user. Index runs, the plugin's SessionStart hook included, fail until then",
    )
  })

  it("refuses without trying a create when access already says no", async () => {
    const fs = memoryFs({ "/": dir, "/ro": dir }, { access: { "/ro": "EROFS" } })
    const probe = await probeDataDirectory("/ro/baton", fs)
    expect(fs.created).toEqual([])
    expect(dataDirectoryProblem(probe)).toContain(
      "/ro/baton does not exist and cannot be created: /ro is on a read-only file system (EROFS)",
    )
  })

  it("says an existing directory cannot be written", async () => {
    const fs = memoryFs({ "/": dir, "/data": dir }, { create: { "/data": "EACCES" } })
    const probe = await probeDataDirectory("/data", fs)
    expect(probe).toMatchObject({ _tag: "Unusable", exists: true, blocker: "/data" })
    expect(dataDirectoryProblem(probe)).toMatch(
      /^the recall index directory \/data cannot be written: \/data is not writable by this user \(EACCES\); set BATON_DATA_DIR/,
    )
  })

  it("names a file or a dangling link in the way, and a path with nothing above it", async () => {
    const file = memoryFs({ "/": dir, "/f": { _tag: "NotADirectory" } }, {})
    expect(dataDirectoryProblem(await probeDataDirectory("/f/baton", file))).toContain(
      "cannot be created: /f is not a directory (a file is in the way); set BATON_DATA_DIR",
    )
    expect(file.created).toEqual([])
    const link = memoryFs({ "/": dir, "/l": { _tag: "DanglingLink", target: "/gone" } }, {})
    expect(dataDirectoryProblem(await probeDataDirectory("/l/baton", link))).toContain(
      "/l is a symbolic link to nothing (it points to /gone)",
    )
    const nothing = memoryFs({}, {})
    expect(dataDirectoryProblem(await probeDataDirectory("/a/b", nothing))).toContain(
      "cannot be created: no directory above it exists",
    )
  })

  it("has no sentence for a usable directory", async () => {
    const fs = memoryFs({ "/": dir, "/data": dir }, {})
    const probe = await probeDataDirectory("/data", fs)
    expect(probe).toEqual({ _tag: "Usable", path: "/data", ancestor: "/data" })
    expect(dataDirectoryProblem(probe)).toBeUndefined()
  })
})

describe("nodeDataDirectoryFileSystem", () => {
  const root = mkdtempSync(join(tmpdir(), "baton-probe-test-"))
  afterAll(() => chmodSync(root, 0o700))

  it("creates in the nearest existing directory and leaves nothing behind", async () => {
    const parent = join(root, "ok")
    mkdirSync(parent)
    const probe = await probeDataDirectory(join(parent, "a", "b"), nodeDataDirectoryFileSystem)
    expect(probe).toEqual({ _tag: "Usable", path: join(parent, "a", "b"), ancestor: parent })
    expect(readdirSync(parent)).toEqual([])
  })

  it("finds a file and a dangling link in the way", async () => {
    writeFileSync(join(root, "file"), "")
    expect(
      await probeDataDirectory(join(root, "file", "x", "baton"), nodeDataDirectoryFileSystem),
    ).toMatchObject({ _tag: "Unusable", blocker: join(root, "file"), blockedBy: "not-a-directory" })
    symlinkSync(join(root, "gone"), join(root, "link"))
    expect(
      await probeDataDirectory(join(root, "link", "baton"), nodeDataDirectoryFileSystem),
    ).toMatchObject({ blocker: join(root, "link"), blockedBy: "dangling-link" })
  })

  it("refuses a directory the user cannot write", async () => {
    const locked = join(root, "locked")
    mkdirSync(locked, 0o500)
    const probe = await probeDataDirectory(join(locked, "baton"), nodeDataDirectoryFileSystem)
    // Root writes through permission bits; the probe then tells the truth by creating.
    expect(probe._tag).toBe(process.getuid?.() === 0 ? "Usable" : "Unusable")
    expect(readdirSync(locked)).toEqual([])
  })

  // /sys refuses mkdir even to root, whose access() check passes there.
  it.skipIf(process.platform !== "linux")(
    "refuses /sys, where access allows root but mkdir fails",
    async () => {
      const probe = await probeDataDirectory("/sys/baton", nodeDataDirectoryFileSystem)
      expect(probe).toMatchObject({ _tag: "Unusable", blocker: "/sys", blockedBy: "not-writable" })
    },
  )
})
