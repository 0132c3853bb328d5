/**
 * Trust checks for the daemon control socket before Baton connects to it. The socket is
 * `$CODEX_HOME/app-server-control/app-server-control.sock`, in 0.169.0 a symlink into
 * `/tmp/codex-daemon-<uid>/<hash>`. Baton talks to it with the user's authority, so every hop must
 * belong to the current user and be closed to group and other: the link's directory, the link,
 * the real socket, and the real socket's directory. Anything else is refused with the reason;
 * there is never a fallback to another (shared) socket. Checks go through an injected file-system
 * view so tests can simulate foreign owners; Baton never chmods or creates anything here.
 */
import { lstat, realpath, stat } from "node:fs/promises"
import { dirname } from "node:path"
import * as Effect from "effect/Effect"
import { DaemonNotRunningError, SocketTrustError } from "./errors.js"

/** What the trust checks need to know about one path. */
export interface PathFacts {
  readonly kind: "file" | "directory" | "symlink" | "socket" | "other"
  readonly uid: number
  /** Permission bits (`mode & 0o7777`). */
  readonly mode: number
}

/** The file-system view used by the trust checks (`null` = the path does not exist). */
export interface SocketFileSystem {
  readonly lstat: (path: string) => Effect.Effect<PathFacts | null, SocketTrustError>
  readonly stat: (path: string) => Effect.Effect<PathFacts | null, SocketTrustError>
  readonly realpath: (path: string) => Effect.Effect<string | null, SocketTrustError>
  /** The uid the connection will act for (the current process's). */
  readonly currentUid: number
}

/** The outcome of a successful check: where to connect and what was verified. */
export interface TrustedSocket {
  /** The path the user configured (usually the symlink). */
  readonly socketPath: string
  /** The resolved real socket; connect here so a swapped link cannot redirect the connection. */
  readonly target: string
  readonly checks: ReadonlyArray<string>
}

const kindOf = (s: {
  isSymbolicLink(): boolean
  isDirectory(): boolean
  isSocket(): boolean
  isFile(): boolean
}): PathFacts["kind"] =>
  s.isSymbolicLink()
    ? "symlink"
    : s.isDirectory()
      ? "directory"
      : s.isSocket()
        ? "socket"
        : s.isFile()
          ? "file"
          : "other"

const isMissing = (cause: unknown) =>
  typeof cause === "object" &&
  cause !== null &&
  ((cause as { code?: unknown }).code === "ENOENT" ||
    (cause as { code?: unknown }).code === "ENOTDIR")

const inspect =
  <A>(what: string, run: (path: string) => Promise<A>) =>
  (path: string): Effect.Effect<A | null, SocketTrustError> =>
    Effect.tryPromise({ try: () => run(path), catch: (cause) => cause }).pipe(
      Effect.catch((cause) =>
        isMissing(cause)
          ? Effect.succeed(null)
          : Effect.fail(
              new SocketTrustError({ path, reason: `cannot ${what} it: ${String(cause)}` }),
            ),
      ),
    )

/** The real file system, acting for the current process's uid. */
export const nodeSocketFileSystem = (): SocketFileSystem => ({
  lstat: inspect("lstat", async (path) => {
    const s = await lstat(path)
    return { kind: kindOf(s), uid: s.uid, mode: s.mode & 0o7777 }
  }),
  stat: inspect("stat", async (path) => {
    const s = await stat(path)
    return { kind: kindOf(s), uid: s.uid, mode: s.mode & 0o7777 }
  }),
  realpath: inspect("resolve", (path) => realpath(path)),
  currentUid: typeof process.getuid === "function" ? process.getuid() : -1,
})

const octal = (mode: number) => `0${mode.toString(8)}`

const requirePrivate = (
  fs: SocketFileSystem,
  path: string,
  facts: PathFacts,
  role: string,
  expected: PathFacts["kind"],
): Effect.Effect<string, SocketTrustError> => {
  if (facts.kind !== expected)
    return Effect.fail(
      new SocketTrustError({ path, reason: `${role} is a ${facts.kind}, expected a ${expected}` }),
    )
  if (facts.uid !== fs.currentUid) {
    return Effect.fail(
      new SocketTrustError({
        path,
        reason: `${role} is owned by uid ${facts.uid}, not by the current user (uid ${fs.currentUid})`,
      }),
    )
  }
  if ((facts.mode & 0o077) !== 0) {
    return Effect.fail(
      new SocketTrustError({
        path,
        reason: `${role} has group/other permissions (mode ${octal(facts.mode)}); it must be private to its owner`,
      }),
    )
  }
  return Effect.succeed(`${role} ${path}: ${expected}, uid ${facts.uid}, mode ${octal(facts.mode)}`)
}

/**
 * Verifies the control socket path and returns the real socket to connect to. A missing socket or
 * dangling link is `DaemonNotRunningError`; any ownership or permission problem is `SocketTrustError`.
 */
export const verifyDaemonSocket = (
  socketPath: string,
  fs: SocketFileSystem = nodeSocketFileSystem(),
): Effect.Effect<TrustedSocket, DaemonNotRunningError | SocketTrustError> =>
  Effect.gen(function* () {
    const checks: Array<string> = []
    const linkDir = dirname(socketPath)
    const linkDirFacts = yield* fs.lstat(linkDir)
    if (linkDirFacts === null) {
      return yield* new DaemonNotRunningError({ socketPath, reason: `${linkDir} does not exist` })
    }
    const link = yield* fs.lstat(socketPath)
    // Say what the path is before judging its directory: a directory or file is not a socket.
    if (link !== null && link.kind !== "symlink" && link.kind !== "socket")
      return yield* new SocketTrustError({
        path: socketPath,
        reason: `it is a ${link.kind}, not a socket (pass the daemon's control socket, e.g. $CODEX_HOME/app-server-control/app-server-control.sock)`,
      })
    checks.push(yield* requirePrivate(fs, linkDir, linkDirFacts, "control directory", "directory"))
    if (link === null)
      return yield* new DaemonNotRunningError({ socketPath, reason: "no control socket" })
    let target = socketPath
    if (link.kind === "symlink") {
      if (link.uid !== fs.currentUid) {
        return yield* new SocketTrustError({
          path: socketPath,
          reason: `the socket link is owned by uid ${link.uid}, not by the current user (uid ${fs.currentUid})`,
        })
      }
      checks.push(`link ${socketPath}: owned by uid ${link.uid}`)
      const resolved = yield* fs.realpath(socketPath)
      if (resolved === null) {
        return yield* new DaemonNotRunningError({
          socketPath,
          reason: "the socket link points to a missing file (stale link)",
        })
      }
      target = resolved
    }
    const targetFacts = yield* fs.stat(target)
    if (targetFacts === null)
      return yield* new DaemonNotRunningError({ socketPath, reason: `${target} does not exist` })
    checks.push(yield* requirePrivate(fs, target, targetFacts, "socket", "socket"))
    const targetDir = dirname(target)
    if (targetDir !== linkDir) {
      const dirFacts = yield* fs.lstat(targetDir)
      if (dirFacts === null)
        return yield* new DaemonNotRunningError({
          socketPath,
          reason: `${targetDir} does not exist`,
        })
      checks.push(yield* requirePrivate(fs, targetDir, dirFacts, "socket directory", "directory"))
    }
    return { socketPath, target, checks }
  })
