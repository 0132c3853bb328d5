/**
 * Decodes the flags of `baton recall …` into the inputs of @baton/recall-index. Guarantees:
 * pure (the working directory comes in), total (every bad value becomes a `CliUsageError` naming
 * the flag and what it accepts, exit 2), and it imports no runtime code from the domain package,
 * so it is cheap to load and to test.
 */
import { resolve } from "node:path"
import type { Invocation } from "./command-spec.js"
import { cliUsageError } from "./errors.js"
import type { CliUsageError } from "./errors.js"

/** A decoded value or the usage error explaining why not. */
export type Decoded<A> =
  | { readonly _tag: "Ok"; readonly value: A }
  | { readonly _tag: "Usage"; readonly error: CliUsageError }

const ok = <A>(value: A): Decoded<A> => ({ _tag: "Ok", value })
const usage = (problem: string, command: string): Decoded<never> => ({
  _tag: "Usage",
  error: cliUsageError(problem, command),
})

/** The command's name for help hints: `baton recall search`. */
export const commandName = (invocation: Invocation): string =>
  ["baton", ...invocation.commandPath].join(" ")

const text = (invocation: Invocation, name: string): string | undefined => {
  const v = invocation.flags[name]
  return typeof v === "string" ? v : undefined
}

/** Whether a toggle flag was given. */
export const has = (invocation: Invocation, name: string): boolean =>
  invocation.flags[name] === true

/** An integer flag in `[min, max]`, or `fallback` when absent. */
export const integerFlag = (
  invocation: Invocation,
  name: string,
  fallback: number,
  min: number,
  max: number,
): Decoded<number> => {
  const raw = text(invocation, name)
  if (raw === undefined) return ok(fallback)
  // Digits only: Number() would also take "1e2", "0x10" and " 7".
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isInteger(n) && n >= min && n <= max
    ? ok(n)
    : usage(
        `--${name} must be a whole number from ${min} to ${max}, not '${raw.slice(0, 20)}'`,
        commandName(invocation),
      )
}

/** Filters shared by search, recent and grep (scope still relative to the repository). */
export interface FilterFlags {
  readonly source?: "claude" | "codex"
  /** An absolute directory; the runner resolves its repository. */
  readonly scopeDir?: string
  readonly onDate?: string
  readonly startDate?: string
  readonly endDate?: string
  readonly timezone?: string
  readonly excludeHeadless?: boolean
}

/** `--source all|claude|codex`; absent or `all` = both. */
export const sourceFlag = (invocation: Invocation): Decoded<"claude" | "codex" | undefined> => {
  const raw = text(invocation, "source")
  if (raw === undefined || raw === "all") return ok(undefined)
  if (raw === "claude" || raw === "codex") return ok(raw)
  return usage(
    `--source must be all, claude or codex, not '${raw.slice(0, 20)}'`,
    commandName(invocation),
  )
}

/** Decodes the filter flags against the working directory `cwd`. */
export const filterFlags = (invocation: Invocation, cwd: string): Decoded<FilterFlags> => {
  const source = sourceFlag(invocation)
  if (source._tag === "Usage") return source
  const scope = text(invocation, "scope")
  if (scope !== undefined && has(invocation, "here")) {
    return usage("give --scope or --here, not both", commandName(invocation))
  }
  const date = text(invocation, "date")
  const start = text(invocation, "start-date")
  const end = text(invocation, "end-date")
  if (date !== undefined && (start !== undefined || end !== undefined)) {
    return usage("give --date or --start-date/--end-date, not both", commandName(invocation))
  }
  const scopeDir = has(invocation, "here")
    ? cwd
    : scope === undefined
      ? undefined
      : resolve(cwd, scope)
  const timezone = text(invocation, "timezone")
  return ok({
    ...(source.value === undefined ? {} : { source: source.value }),
    ...(scopeDir === undefined ? {} : { scopeDir }),
    ...(date === undefined ? {} : { onDate: date }),
    ...(start === undefined ? {} : { startDate: start }),
    ...(end === undefined ? {} : { endDate: end }),
    ...(timezone === undefined ? {} : { timezone }),
    ...(has(invocation, "no-headless") ? { excludeHeadless: true } : {}),
  })
}

/** A string flag's value, if given. */
export const stringFlag = (invocation: Invocation, name: string): string | undefined =>
  text(invocation, name)

/** What `baton recall forget` should remove. */
export type ForgetChoice =
  | { readonly _tag: "All" }
  | { readonly _tag: "Session"; readonly sessionId: string; readonly source?: "claude" | "codex" }
  | { readonly _tag: "Project"; readonly dir: string; readonly source?: "claude" | "codex" }

/** Exactly one of `--session`, `--project`, `--all` (the last with `--yes`). */
export const forgetFlags = (invocation: Invocation, cwd: string): Decoded<ForgetChoice> => {
  const session = text(invocation, "session")
  const project = text(invocation, "project")
  const all = has(invocation, "all")
  const given = [session !== undefined, project !== undefined, all].filter(Boolean).length
  const name = commandName(invocation)
  if (given !== 1)
    return usage("give exactly one of --session <id>, --project <dir> or --all", name)
  const source = sourceFlag(invocation)
  if (source._tag === "Usage") return source
  if (all) {
    if (source.value !== undefined)
      return usage("--source narrows --session or --project; --all empties the whole index", name)
    return has(invocation, "yes")
      ? ok({ _tag: "All" })
      : usage("--all empties the whole index; add --yes to confirm", name)
  }
  if (session !== undefined) {
    return ok({
      _tag: "Session",
      sessionId: session,
      ...(source.value === undefined ? {} : { source: source.value }),
    })
  }
  return ok({
    _tag: "Project",
    dir: resolve(cwd, project ?? "."),
    ...(source.value === undefined ? {} : { source: source.value }),
  })
}
