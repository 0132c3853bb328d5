/**
 * Reads a handoff's bytes (or text) from a file or stdin (`-`). Guarantees: never throws — a
 * missing, unreadable or oversized input becomes an `InputUnreadableError` naming the path as
 * given; never reads more than `maxInputBytes` + one chunk (a device like /dev/zero or an endless
 * pipe is cut off at the cap); nothing is written. Bytes are returned undecoded so the handoff
 * library can refuse invalid UTF-8 instead of replacing it.
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

/** The bytes read, or why they could not be read. */
export type InputBytes =
  | { readonly _tag: "Success"; readonly success: Uint8Array }
  | { readonly _tag: "Failure"; readonly failure: InputUnreadableError }

const tooLarge = () =>
  Object.assign(new Error(`larger than ${maxInputBytes} bytes`), { code: "EFBIG" })

const reasons: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "a parent is not a directory",
  ELOOP: "too many symbolic links",
}

const withoutBom = (text: string): string => (text.startsWith("\uFEFF") ? text.slice(1) : text)

const readFileBytes = async (path: string, cwd: string): Promise<Uint8Array> => {
  const handle = await open(resolve(cwd, path), "r")
  try {
    const info = await handle.stat()
    if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" })
    if (info.isFile() && info.size > maxInputBytes) throw tooLarge()
    // Bounded reads: a character device or FIFO has no size, so stop at the cap ourselves.
    const chunks: Array<Buffer> = []
    let total = 0
    for (;;) {
      const { bytesRead, buffer } = await handle.read({ buffer: Buffer.alloc(64 * 1024) })
      if (bytesRead === 0) break
      total += bytesRead
      if (total > maxInputBytes) throw tooLarge()
      chunks.push(buffer.subarray(0, bytesRead))
    }
    return Buffer.concat(chunks)
  } finally {
    await handle.close()
  }
}

const failed = (
  path: string,
  error: unknown,
): { _tag: "Failure"; failure: InputUnreadableError } => {
  const code = (error as NodeJS.ErrnoException).code ?? ""
  const reason = reasons[code] ?? (error instanceof Error ? error.message : String(error))
  return { _tag: "Failure", failure: inputUnreadableError(path === "-" ? "<stdin>" : path, reason) }
}

/** Reads `path` (relative to `io.cwd`), or stdin when `path` is `-`, as bytes, at most `maxInputBytes`. */
export const readInputBytes = async (path: string, io: CliIo): Promise<InputBytes> => {
  try {
    const bytes =
      path === "-" ? await io.readStdin(maxInputBytes) : await readFileBytes(path, io.cwd)
    return { _tag: "Success", success: bytes }
  } catch (error) {
    return failed(path, error)
  }
}

/** Reads `path` (or stdin for `-`) as UTF-8 text; a leading byte order mark is dropped. */
export const readInputText = async (path: string, io: CliIo): Promise<InputText> => {
  const read = await readInputBytes(path, io)
  return read._tag === "Failure"
    ? read
    : { _tag: "Success", success: withoutBom(Buffer.from(read.success).toString("utf8")) }
}
