/**
 * The CLI's window on the process: output streams, stdin, environment and working directory.
 * Commands receive it instead of touching `process`, so they run the same under tests.
 */

/** Output, input and environment handed to every command. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** All of stdin as bytes; rejects (code `EFBIG`) as soon as more than `maxBytes` arrive. */
  readonly readStdin: (maxBytes: number) => Promise<Uint8Array>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}

const readAll = async (stream: NodeJS.ReadableStream, maxBytes: number): Promise<Uint8Array> => {
  const chunks: Buffer[] = []
  let total = 0
  // Leaving the loop early (the throw) ends the iteration and stops reading the stream.
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    total += bytes.length
    if (total > maxBytes)
      throw Object.assign(new Error(`larger than ${maxBytes} bytes`), { code: "EFBIG" })
    chunks.push(bytes)
  }
  return Buffer.concat(chunks)
}

/**
 * The working directory: `process.cwd()`, or, when that directory was deleted (a removed git
 * worktree or temporary directory; `process.cwd()` then throws), the shell's `PWD` naming it, else
 * `/`. So `--version`, the SessionStart hook and `baton mcp` still run there, and what needs the
 * directory itself fails on it with its own error instead of a stack trace at start-up.
 */
export const workingDirectory = (
  cwd: () => string = () => process.cwd(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): string => {
  try {
    return cwd()
  } catch {
    const pwd = env["PWD"]
    return pwd !== undefined && pwd.startsWith("/") ? pwd : "/"
  }
}

/** The real process: `process.stdout`, `process.stderr`, `process.stdin`, `process.env`, the working directory. */
export const processCliIo = (): CliIo => ({
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: (maxBytes) => readAll(process.stdin, maxBytes),
  env: process.env,
  cwd: workingDirectory(),
})
