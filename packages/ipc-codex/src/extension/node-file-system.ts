/**
 * Node adapter for {@link IpcFileSystem} and the ambient {@link EndpointEnvironment}. Tiny on
 * purpose: it classifies `fs` results into kinds and errno codes and holds no rules (those are
 * in endpoint.ts). Never creates, chmods or deletes anything.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Stats } from "node:fs"
import { lstat, realpath, stat } from "node:fs/promises"
import { homedir, tmpdir } from "node:os"
import { IpcFileSystem } from "./endpoint.js"
import type { EndpointEnvironment, IpcFileStat, IpcFsFailure } from "./endpoint.js"
import type { FileKind } from "./errors.js"

const kindOf = (st: Stats): FileKind => {
  if (st.isSymbolicLink()) return "symlink"
  if (st.isDirectory()) return "directory"
  if (st.isSocket()) return "socket"
  if (st.isFile()) return "file"
  return "other"
}

const toStat = (st: Stats): IpcFileStat => ({
  kind: kindOf(st),
  uid: st.uid,
  mode: st.mode,
  dev: st.dev,
  ino: st.ino,
})

const failure =
  (p: string) =>
  (cause: unknown): IpcFsFailure => {
    const code =
      typeof cause === "object" &&
      cause !== null &&
      "code" in cause &&
      typeof cause.code === "string"
        ? cause.code
        : "EUNKNOWN"
    return { _tag: "IpcFsFailure", code, path: p }
  }

/** The real filesystem, through `node:fs/promises`. */
export const nodeIpcFileSystem: IpcFileSystem["Service"] = {
  lstat: (p) =>
    Effect.tryPromise({ try: () => lstat(p), catch: failure(p) }).pipe(Effect.map(toStat)),
  stat: (p) =>
    Effect.tryPromise({ try: () => stat(p), catch: failure(p) }).pipe(Effect.map(toStat)),
  realpath: (p) => Effect.tryPromise({ try: () => realpath(p), catch: failure(p) }),
}

/** Layer providing {@link nodeIpcFileSystem}. */
export const nodeIpcFileSystemLayer: Layer.Layer<IpcFileSystem> = Layer.succeed(
  IpcFileSystem,
  nodeIpcFileSystem,
)

/** The current process's endpoint environment (platform, env, home, uid, temp dir). */
export const nodeEndpointEnvironment = (
  options: { readonly allowLegacyTempSocket?: boolean } = {},
): EndpointEnvironment => ({
  platform: process.platform,
  env: process.env,
  homeDir: homedir(),
  uid: typeof process.getuid === "function" ? process.getuid() : undefined,
  tmpDir: tmpdir(),
  allowLegacyTempSocket: options.allowLegacyTempSocket ?? false,
})
