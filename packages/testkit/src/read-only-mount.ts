/**
 * A read-only file system to test against: an empty tmpfs mounted `ro` on a new directory. Only
 * root can mount; elsewhere {@link mountReadOnly} says why it could not, so a test can skip
 * with that reason instead of passing unchecked.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A mounted read-only directory; `dispose` unmounts and removes it. */
export interface ReadOnlyMount {
  readonly path: string
  readonly dispose: () => void
}

/** Mounts an empty read-only tmpfs, or returns why it cannot (not root, no `mount`). */
export const mountReadOnly = (): ReadOnlyMount | { readonly unavailable: string } => {
  if (process.getuid?.() !== 0) return { unavailable: "mounting needs root" }
  const path = mkdtempSync(join(tmpdir(), "baton-ro-"))
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", path], { stdio: "pipe" })
  } catch (error) {
    rmSync(path, { recursive: true, force: true })
    return { unavailable: `mount failed: ${(error as Error).message.split("\n")[0]}` }
  }
  return {
    path,
    dispose: () => {
      execFileSync("umount", [path], { stdio: "pipe" })
      rmSync(path, { recursive: true, force: true })
    },
  }
}
