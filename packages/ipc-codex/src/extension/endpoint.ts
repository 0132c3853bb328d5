/**
 * Where the Codex VS Code extension's IPC router listens, and whether Baton may trust it.
 * Guarantees:
 * - win32 resolves to the `\\.\pipe\codex-ipc` named pipe without touching the filesystem;
 *   platforms other than win32, darwin and linux fail before any filesystem access;
 * - on darwin/linux the socket is `<realpath(CODEX_HOME)>/ipc/ipc.sock` (CODEX_HOME must be
 *   absolute, default `~/.codex`), and on every resolution both `ipc/` and `ipc.sock` are
 *   `lstat`ed: no symlink, the right kind, owned by the current uid, `mode & 0o077 == 0`;
 * - a missing socket is an error; it never creates, chmods or falls back to a shared temp
 *   socket. The legacy `$TMPDIR/codex-ipc/ipc-<uid>.sock` is looked at only when the caller
 *   opts in, and then passes the same private-ownership checks (a 0755 shared dir is refused).
 * All filesystem access goes through the injected {@link IpcFileSystem}.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import {
  EndpointAccessError,
  EndpointConfigError,
  EndpointKindError,
  EndpointMissingError,
  EndpointOwnerError,
  EndpointPermissionError,
  EndpointSymlinkError,
  EndpointUnsupportedPlatformError,
} from "./errors.js"
import type { EndpointError, EndpointRole, FileKind } from "./errors.js"

/** The Windows named pipe of the extension's router. */
export const WINDOWS_PIPE_PATH = "\\\\.\\pipe\\codex-ipc"

/** What Baton needs to know about one filesystem entry. */
export interface IpcFileStat {
  readonly kind: FileKind
  readonly uid: number
  readonly mode: number
  readonly dev: number
  readonly ino: number
}

/** A failed filesystem call, classified by its errno code (`ENOENT`, `EACCES`, …). */
export interface IpcFsFailure {
  readonly _tag: "IpcFsFailure"
  readonly code: string
  readonly path: string
}

/** The filesystem calls endpoint resolution makes; injected so tests can fake ownership. */
export interface IpcFileSystemShape {
  /** Stat without following a final symlink. */
  readonly lstat: (p: string) => Effect.Effect<IpcFileStat, IpcFsFailure>
  /** Stat following symlinks. */
  readonly stat: (p: string) => Effect.Effect<IpcFileStat, IpcFsFailure>
  /** The canonical absolute path (symlinks resolved). */
  readonly realpath: (p: string) => Effect.Effect<string, IpcFsFailure>
}

/** Service key for the filesystem used by endpoint resolution. */
export class IpcFileSystem extends Context.Service<IpcFileSystem, IpcFileSystemShape>()(
  "@baton/ipc-codex/extension/IpcFileSystem",
) {}

/** The environment facts endpoint resolution needs; no ambient process state is read. */
export interface EndpointEnvironment {
  readonly platform: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly homeDir: string
  /** The current uid; undefined on Windows. */
  readonly uid: number | undefined
  /** The OS temp dir; only used when `allowLegacyTempSocket` is set. */
  readonly tmpDir?: string | undefined
  /** Opt in to the private legacy `$TMPDIR/codex-ipc/ipc-<uid>.sock` when the primary is missing. */
  readonly allowLegacyTempSocket?: boolean | undefined
}

/** A trusted endpoint: a checked unix socket (with its identity) or the Windows pipe. */
export type IpcEndpoint =
  | {
      readonly _tag: "UnixSocket"
      readonly path: string
      readonly directory: string
      readonly identity: { readonly dev: number; readonly ino: number }
    }
  | { readonly _tag: "WindowsPipe"; readonly path: string }

const isAbsolutePosix = (p: string): boolean => path.posix.isAbsolute(p)

/** The CODEX_HOME in effect (absolute), or why it cannot be used. */
export const resolveCodexHome = (
  environment: EndpointEnvironment,
): Effect.Effect<string, EndpointConfigError> => {
  const configured = environment.env["CODEX_HOME"]
  if (configured !== undefined && configured !== "") {
    return isAbsolutePosix(configured)
      ? Effect.succeed(configured)
      : Effect.fail(
          new EndpointConfigError({
            variable: "CODEX_HOME",
            value: configured,
            problem: "is not absolute",
          }),
        )
  }
  return isAbsolutePosix(environment.homeDir)
    ? Effect.succeed(path.posix.join(environment.homeDir, ".codex"))
    : Effect.fail(
        new EndpointConfigError({
          variable: "HOME",
          value: environment.homeDir,
          problem: "is not absolute, so the default CODEX_HOME (~/.codex) cannot be located",
        }),
      )
}

/** The legacy socket name: `ipc-<uid>.sock`, or `ipc.sock` for uid 0. */
export const legacySocketName = (uid: number): string =>
  uid === 0 ? "ipc.sock" : `ipc-${uid}.sock`

type Missing = { readonly _tag: "Missing"; readonly path: string }

const missing = (p: string): Missing => ({ _tag: "Missing", path: p })

const accessError =
  (role: EndpointRole) =>
  (failure: IpcFsFailure): Effect.Effect<never, EndpointAccessError | Missing> =>
    failure.code === "ENOENT" || failure.code === "ENOTDIR"
      ? Effect.fail(missing(failure.path))
      : Effect.fail(new EndpointAccessError({ path: failure.path, role, code: failure.code }))

/** Checks one entry with lstat: not a symlink, expected kind, owned by `uid`, private mode. */
const checkEntry = (
  fs: IpcFileSystemShape,
  p: string,
  role: EndpointRole,
  expected: FileKind,
  uid: number,
): Effect.Effect<IpcFileStat, EndpointError | Missing> =>
  fs.lstat(p).pipe(
    Effect.catch(accessError(role)),
    Effect.flatMap((st): Effect.Effect<IpcFileStat, EndpointError> => {
      if (st.kind === "symlink") return Effect.fail(new EndpointSymlinkError({ path: p, role }))
      if (st.kind !== expected)
        return Effect.fail(new EndpointKindError({ path: p, role, expected, actual: st.kind }))
      if (st.uid !== uid)
        return Effect.fail(
          new EndpointOwnerError({ path: p, role, expectedUid: uid, actualUid: st.uid }),
        )
      if ((st.mode & 0o077) !== 0)
        return Effect.fail(new EndpointPermissionError({ path: p, role, mode: st.mode }))
      return Effect.succeed(st)
    }),
  )

/** Checks `<directory>/<socketName>`: the directory first, then the socket. */
const checkSocketIn = (
  fs: IpcFileSystemShape,
  directory: string,
  socketName: string,
  uid: number,
): Effect.Effect<IpcEndpoint, EndpointError | Missing> =>
  Effect.gen(function* () {
    yield* checkEntry(fs, directory, "ipc-directory", "directory", uid)
    const socketPath = path.posix.join(directory, socketName)
    const st = yield* checkEntry(fs, socketPath, "socket", "socket", uid)
    return {
      _tag: "UnixSocket",
      path: socketPath,
      directory,
      identity: { dev: st.dev, ino: st.ino },
    } as const
  })

/** The primary socket directory: `<realpath(CODEX_HOME)>/ipc`. */
const primaryDirectory = (
  fs: IpcFileSystemShape,
  home: string,
): Effect.Effect<string, EndpointError | Missing> =>
  Effect.gen(function* () {
    const st = yield* fs.stat(home).pipe(Effect.catch(accessError("codex-home")))
    if (st.kind !== "directory")
      return yield* new EndpointKindError({
        path: home,
        role: "codex-home",
        expected: "directory",
        actual: st.kind,
      })
    const real = yield* fs.realpath(home).pipe(Effect.catch(accessError("codex-home")))
    return path.posix.join(real, "ipc")
  })

/**
 * Resolves and checks the extension's IPC endpoint. Runs every check on every call, so call it
 * before every connect.
 */
export const resolveExtensionEndpoint = (
  environment: EndpointEnvironment,
): Effect.Effect<IpcEndpoint, EndpointError, IpcFileSystem> =>
  Effect.gen(function* () {
    if (environment.platform === "win32")
      return { _tag: "WindowsPipe", path: WINDOWS_PIPE_PATH } as const
    if (environment.platform !== "darwin" && environment.platform !== "linux")
      return yield* new EndpointUnsupportedPlatformError({ platform: environment.platform })
    const uid = environment.uid
    if (uid === undefined)
      return yield* new EndpointConfigError({
        variable: "uid",
        value: "undefined",
        problem: "is unknown on this platform, so socket ownership cannot be verified",
      })
    const home = yield* resolveCodexHome(environment)
    const fs = yield* IpcFileSystem
    const primarySocket = path.posix.join(home, "ipc", "ipc.sock")
    const primary = yield* primaryDirectory(fs, home).pipe(
      Effect.flatMap((directory) => checkSocketIn(fs, directory, "ipc.sock", uid)),
      Effect.result,
    )
    if (primary._tag === "Success") return primary.success
    const primaryFailure = primary.failure
    if (primaryFailure._tag !== "Missing") return yield* Effect.fail(primaryFailure)

    const tmpDir = environment.tmpDir
    if (
      environment.allowLegacyTempSocket !== true ||
      tmpDir === undefined ||
      !isAbsolutePosix(tmpDir)
    )
      return yield* new EndpointMissingError({ path: primarySocket, checked: [primarySocket] })
    const legacyDirectory = path.posix.join(tmpDir, "codex-ipc")
    const legacySocket = path.posix.join(legacyDirectory, legacySocketName(uid))
    const legacy = yield* checkSocketIn(fs, legacyDirectory, legacySocketName(uid), uid).pipe(
      Effect.result,
    )
    if (legacy._tag === "Success") return legacy.success
    if (legacy.failure._tag !== "Missing") return yield* Effect.fail(legacy.failure)
    return yield* new EndpointMissingError({
      path: primarySocket,
      checked: [primarySocket, legacySocket],
    })
  })

/** True when two unix endpoints name the same socket inode (used to detect a replaced socket). */
export const sameSocket = (a: IpcEndpoint, b: IpcEndpoint): boolean =>
  a._tag === "UnixSocket" && b._tag === "UnixSocket"
    ? a.path === b.path && a.identity.dev === b.identity.dev && a.identity.ino === b.identity.ino
    : a._tag === b._tag && a.path === b.path
