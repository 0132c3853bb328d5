/**
 * Reads a handoff's text from a file or stdin (`-`). Guarantees: never throws — a missing,
 * unreadable, non-regular or oversized file becomes an `InputUnreadableError` naming the path as
 * given; a leading UTF-8 byte order mark is dropped; nothing is written.
 */
import { open } from "node:fs/promises"
import { resolve } from "node:path"
import type { CliIo } from "./cli-io.js"
import { inputUnreadableError } from "./errors.js"
import type { InputUnreadableError } from "./errors.js"

/** The most bytes read from a handoff file; far above the handoff limit, it only bounds memory. */
export const maxInputBytes = 8 * 1024 * 1024

/** The text read, or why it could not be read. */
export type InputText =
  | { readonly _tag: "Success"; readonly success: string }
  | { readonly _tag: "Failure"; readonly failure: InputUnreadableError }

const reasons: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "a parent is not a directory",
  ELOOP: "too many symbolic links",
}

const withoutBom = (text: string): string => (text.startsWith("\uFEFF") ? text.slice(1) : text)

const readFileText = async (path: string, cwd: string): Promise<string> => {
  const handle = await open(resolve(cwd, path), "r")
  try {
    const info = await handle.stat()
    if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" })
    if (info.isFile() && info.size > maxInputBytes) {
      throw Object.assign(new Error(`larger than ${maxInputBytes} bytes`), { code: "EFBIG" })
    }
    return await handle.readFile("utf8")
  } finally {
    await handle.close()
  }
}

/** Reads `path` (relative to `io.cwd`), or stdin when `path` is `-`. */
export const readInputText = async (path: string, io: CliIo): Promise<InputText> => {
  try {
    const text = path === "-" ? await io.readStdin() : await readFileText(path, io.cwd)
    return { _tag: "Success", success: withoutBom(text) }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? ""
    const reason = reasons[code] ?? (error instanceof Error ? error.message : String(error))
    return {
      _tag: "Failure",
      failure: inputUnreadableError(path === "-" ? "<stdin>" : path, reason),
    }
  }
}
