/**
 * Finds the client (VS Code window) that owns a conversation via `thread-owner-discovery`
 * (version from the method table, untargeted, params `{hostId: "local", conversationId}`).
 * Guarantees: the owner is the envelope `handledByClientId`; `no-client-found` is retried
 * with the bounded delays given (safe: nothing was delivered); every other failure is returned
 * at once; delays run on the injected Clock.
 */
import * as Effect from "effect/Effect"
import { LOCAL_HOST_ID } from "./envelope.js"
import { OwnerNotFoundError } from "./errors.js"
import type { IpcRequestError } from "./errors.js"
import type { IpcConnection } from "./ipc-connection.js"

/** Delays before each discovery attempt: short retries, then renderer-reactivation waits. */
export const DEFAULT_DISCOVERY_DELAYS_MS: ReadonlyArray<number> = [0, 125, 350, 1000, 1500]

/** Discovers the owner of `conversationId`; one attempt per entry of `delaysMs`. */
export const discoverOwner = (
  connection: IpcConnection,
  conversationId: string,
  options: {
    readonly version: number
    readonly delaysMs: ReadonlyArray<number>
    readonly previousOwnerId?: string | undefined
    /** Called before waiting for the next attempt (observability; runs before the delay). */
    readonly onRetry?: ((attempt: number, delayMs: number) => Effect.Effect<void>) | undefined
  },
): Effect.Effect<
  string,
  OwnerNotFoundError | Exclude<IpcRequestError, { readonly _tag: "NoClientFoundError" }>
> =>
  Effect.gen(function* () {
    const delays = options.delaysMs.length === 0 ? [0] : options.delaysMs
    let attempts = 0
    for (const delay of delays) {
      if (attempts > 0 && options.onRetry !== undefined) yield* options.onRetry(attempts + 1, delay)
      if (delay > 0) yield* Effect.sleep(delay)
      attempts += 1
      const response = yield* connection
        .request(
          "thread-owner-discovery",
          { hostId: LOCAL_HOST_ID, conversationId },
          { version: options.version },
        )
        .pipe(Effect.catchTag("NoClientFoundError", () => Effect.succeed(undefined)))
      if (response?.handledByClientId !== undefined && response.handledByClientId !== "")
        return response.handledByClientId
    }
    return yield* new OwnerNotFoundError({
      conversationId,
      attempts,
      previousOwnerId: options.previousOwnerId,
    })
  })
