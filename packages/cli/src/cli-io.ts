/**
 * The CLI's window on the process: output streams, stdin, environment and working directory.
 * Commands receive it instead of touching `process`, so they run the same under tests.
 */

/** Output, input and environment handed to every command. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly readStdin: () => Promise<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}

const readAll = async (stream: NodeJS.ReadableStream): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of stream)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString("utf8")
}

/** The real process: `process.stdout`, `process.stderr`, `process.stdin`, `process.env`, `process.cwd()`. */
export const processCliIo = (): CliIo => ({
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: () => readAll(process.stdin),
  env: process.env,
  cwd: process.cwd(),
})
