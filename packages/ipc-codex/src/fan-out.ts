/**
 * Fan-out of values to stream subscribers through bounded sliding queues. Publishing never blocks
 * and never waits for a subscriber: a slow subscriber loses its oldest values (counted), it never
 * slows the connection's reader. Ending fails every subscriber's stream with the given error
 * after the values already buffered.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

/** A publish/subscribe point whose publish is synchronous and non-blocking. */
export interface FanOut<A, E> {
  /** Offers a value to every subscriber; never blocks. */
  readonly publish: (value: A) => void
  /** A stream of values from now on, optionally starting with `initial()` read at subscription time. */
  readonly subscribe: (initial?: () => ReadonlyArray<A>) => Stream.Stream<A, E>
  /** Fails every current and future subscriber with `error` (after what they already hold). */
  readonly end: (error: E) => void
  readonly subscriberCount: () => number
  /** Values dropped because a subscriber's buffer was full. */
  readonly dropped: () => number
}

/** Creates a fan-out whose subscribers buffer at most `capacity` values each. */
export const makeFanOut = <A, E>(capacity: number): FanOut<A, E> => {
  const subscribers = new Set<Queue.Queue<A, E | Cause.Done>>()
  let ended: { readonly error: E } | null = null
  let dropped = 0
  const offer = (queue: Queue.Queue<A, E | Cause.Done>, value: A) => {
    if (Queue.sizeUnsafe(queue) >= capacity) dropped++
    Queue.offerUnsafe(queue, value)
  }
  return {
    publish: (value) => {
      for (const queue of subscribers) offer(queue, value)
    },
    subscribe: (initial) =>
      Stream.unwrap(
        Effect.acquireRelease(
          Effect.flatMap(Queue.sliding<A, E | Cause.Done>(capacity), (queue) =>
            Effect.sync(() => {
              for (const value of initial?.() ?? []) offer(queue, value)
              if (ended !== null) Queue.failCauseUnsafe(queue, Cause.fail(ended.error))
              else subscribers.add(queue)
              return queue
            }),
          ),
          (queue) => Effect.sync(() => subscribers.delete(queue)),
        ).pipe(Effect.map((queue) => Stream.fromQueue(queue))),
      ),
    end: (error) => {
      if (ended !== null) return
      ended = { error }
      for (const queue of subscribers) Queue.failCauseUnsafe(queue, Cause.fail(error))
      subscribers.clear()
    },
    subscriberCount: () => subscribers.size,
    dropped: () => dropped,
  }
}
