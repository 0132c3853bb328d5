/**
 * Shared setup of the extension-IPC tests: the Node IPC layer with a test clock, one fake router
 * per test (closed after it), and small helpers to open a session and wait for a status.
 */
import { Effect, Layer, Option, Stream } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { afterEach } from "vitest"
import { openExtensionThread } from "@baton/ipc-codex"
import type {
  ExtensionSessionStatus,
  ExtensionThread,
  ExtensionThreadOptions,
  IpcFileSystem,
  IpcSocketConnector,
} from "@baton/ipc-codex"
import {
  FakeExtensionRouter,
  conversationStateFixture,
  fakeRouterEnvironment,
  nodeIpcLayer,
} from "@baton/ipc-codex/testing"
import type { FakeRouterOptions } from "@baton/ipc-codex/testing"

type Env = Scope.Scope | IpcFileSystem | IpcSocketConnector
const layer = Layer.merge(nodeIpcLayer, TestClock.layer())

/** Runs a scoped test program with the Node IPC layer and a test clock. */
export const run = <A, E>(effect: Effect.Effect<A, E, Env>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.scoped, Effect.provide(layer)))

let router: FakeExtensionRouter | undefined
afterEach(async () => {
  await router?.close()
  router = undefined
})

/** Starts this test's fake router (closed after the test) with the default conversation. */
export const startRouter = async (
  options: FakeRouterOptions = {},
): Promise<FakeExtensionRouter> => {
  router = await FakeExtensionRouter.start({ state: conversationStateFixture(), ...options })
  return router
}

/** Opens a session on the router's conversation. */
export const open = (r: FakeExtensionRouter, options: Partial<ExtensionThreadOptions> = {}) =>
  openExtensionThread({
    conversationId: r.conversationId,
    environment: fakeRouterEnvironment(r),
    ...options,
  })

/** The first session status that `accept` takes. */
export const until = <S extends ExtensionSessionStatus>(
  thread: ExtensionThread,
  accept: (s: ExtensionSessionStatus) => s is S,
) => thread.changes.pipe(Stream.filter(accept), Stream.runHead, Effect.map(Option.getOrThrow))

/** Accepts the live status at `revision`. */
export const liveAt =
  (revision: number) =>
  (s: ExtensionSessionStatus): s is Extract<ExtensionSessionStatus, { _tag: "Live" }> =>
    s._tag === "Live" && s.revision === revision

/** Lifts a promise-returning step into the test program. */
export const promise = <A>(f: () => Promise<A>) => Effect.promise(f)
