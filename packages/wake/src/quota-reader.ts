/**
 * The quota port: one reading of the account's rate limits without spending a model turn.
 *
 * The Codex adapter keeps one app-server connection (a private `codex app-server`, never a
 * thread) and calls `account/rateLimits/read`. Signed in, that returns `ordinaryUsageAllowed`,
 * which Codex sets from the backend usage answer's `rate_limit.allowed` and only when the answer's
 * `account_id` and `user_id` match the signed-in account (openai/codex app-server
 * `account_processor.rs`, backend-client `rate_limit_resets.rs`); null otherwise. Signed out, the
 * read is refused and the reading says so: pressure then comes only from passive sources
 * (rollout `token_count` events and `account/rateLimits/updated`). A failed read closes the
 * connection; the next read opens a new one. No reading ever claims "allowed" on its own: only
 * the server's `true` does.
 */
import type { CodexConnection, CodexConnectError, RateLimitsState } from "@baton/ipc-codex"
import { applyRateLimitsRead } from "@baton/ipc-codex"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/** One quota reading. */
export type QuotaReading =
  | {
      readonly _tag: "Read"
      /** `ordinaryUsageAllowed`: true, false, or null (unavailable / not validated). */
      readonly allowed: boolean | null
      readonly rateLimits: RateLimitsState
      readonly at: number
    }
  /** Not signed in with ChatGPT: no allowance can be read; passive data may still exist. */
  | {
      readonly _tag: "SignedOut"
      readonly rateLimits: RateLimitsState | null
      readonly detail: string
      readonly at: number
    }
  | { readonly _tag: "Unavailable"; readonly detail: string; readonly at: number }

/** The allowance a reading carries (null unless the server said true or false). */
export const allowanceOf = (reading: QuotaReading): boolean | null =>
  reading._tag === "Read" ? reading.allowed : null

/** The quota reader. */
export interface QuotaReaderShape {
  readonly read: Effect.Effect<QuotaReading>
  /** Releases the connection (the next read reconnects). */
  readonly close: Effect.Effect<void>
}

/** The quota reader service. */
export class QuotaReader extends Context.Service<QuotaReader, QuotaReaderShape>()(
  "@baton/wake/QuotaReader",
) {}

const describe = (error: { readonly _tag: string; readonly message?: string }): string =>
  `${error._tag}${error.message === undefined || error.message === "" ? "" : `: ${error.message}`}`

/** A reader over app-server connections opened by `connect` (kept open between reads). */
export const makeCodexQuotaReader = (
  connect: Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope>,
): Effect.Effect<QuotaReaderShape> =>
  Effect.sync(() => {
    let open: { readonly connection: CodexConnection; readonly scope: Scope.Closeable } | null =
      null

    const close = Effect.suspend(() => {
      const current = open
      open = null
      return current === null ? Effect.void : Scope.close(current.scope, Exit.void)
    })

    const connection = Effect.gen(function* () {
      if (open !== null) return open.connection
      const scope = yield* Scope.make()
      const opened = yield* Effect.exit(Scope.provide(connect, scope))
      if (Exit.isFailure(opened)) {
        yield* Scope.close(scope, Exit.void)
        return yield* Effect.failCause(opened.cause)
      }
      open = { connection: opened.value, scope }
      return opened.value
    })

    const read: Effect.Effect<QuotaReading> = Effect.gen(function* () {
      const conn = yield* Effect.result(connection)
      const at = yield* Clock.currentTimeMillis
      if (conn._tag === "Failure")
        return { _tag: "Unavailable", detail: describe(conn.failure), at } as const
      const result = yield* Effect.result(conn.success.readRateLimits)
      if (result._tag === "Success")
        return {
          _tag: "Read",
          allowed: result.success.ordinaryUsageAllowed,
          rateLimits: result.success.state,
          at,
        } as const
      const error = result.failure
      if (error._tag === "NotAuthenticatedError")
        return {
          _tag: "SignedOut",
          rateLimits: yield* conn.success.rateLimits,
          detail: describe(error),
          at,
        } as const
      yield* close
      return { _tag: "Unavailable", detail: describe(error), at } as const
    })

    return { read, close }
  })

/** Layer: the Codex reader over `connect`; the connection closes with the layer. */
export const codexQuotaReaderLayer = (
  connect: Effect.Effect<CodexConnection, CodexConnectError, Scope.Scope>,
): Layer.Layer<QuotaReader> =>
  Layer.effect(
    QuotaReader,
    Effect.acquireRelease(makeCodexQuotaReader(connect), (reader) => reader.close),
  )

/** The twin: answers from a script the test changes (`set`), counting reads. */
export const makeScriptedQuotaReader = (
  initial: QuotaReading | ((at: number) => QuotaReading),
): QuotaReaderShape & {
  readonly set: (next: QuotaReading | ((at: number) => QuotaReading)) => void
  readonly reads: () => number
} => {
  let script = initial
  let count = 0
  return {
    set: (next) => {
      script = next
    },
    reads: () => count,
    read: Effect.map(Clock.currentTimeMillis, (at) => {
      count += 1
      return typeof script === "function" ? script(at) : { ...script, at }
    }),
    close: Effect.void,
  }
}

/** A `Read` reading with the given allowance and windows (for tests and fakes). */
export const readingOf = (
  allowed: boolean | null,
  windows: {
    readonly primaryUsedPercent?: number
    readonly primaryResetsAtSec?: number | null
    readonly limitId?: string
  } = {},
): QuotaReading => ({
  _tag: "Read",
  allowed,
  at: 0,
  rateLimits: applyRateLimitsRead(
    {
      ordinaryUsageAllowed: allowed,
      rateLimits: {
        limitId: windows.limitId ?? "codex",
        primary:
          windows.primaryUsedPercent === undefined
            ? null
            : {
                usedPercent: windows.primaryUsedPercent,
                windowDurationMins: 300,
                resetsAt: windows.primaryResetsAtSec ?? null,
              },
      },
      rateLimitsByLimitId: null,
    },
    0,
  ),
})
