/**
 * Applies the owner's state patches (`add` / `replace` / `remove` with array paths) to a JSON
 * state. Guarantees:
 * - the input state is never mutated: containers along each path are copied (copy-on-write,
 *   shared subtrees are reused), so a batch that fails leaves the caller's state as it was and
 *   a batch that succeeds returns a new root;
 * - `__proto__`, `prototype` and `constructor` anywhere in a path are refused, and existence is
 *   checked with own properties only, so no patch reaches or alters an object prototype;
 * - rules (codex-extension-ipc.md §7): every intermediate must exist and be a container;
 *   arrays take integer indexes (or canonical digit strings) with `add` in 0..len or `-`
 *   (append), `replace`/`remove` in 0..len−1, splice semantics; objects need an existing own
 *   key for `replace`/`remove`, `add` creates or overwrites; the empty path is the root
 *   (`remove` of the root is refused).
 * Pure and never throws.
 */
import * as Result from "effect/Result"
import { StatePatchError } from "./errors.js"
import type { PatchOperation } from "./envelope.js"

/** Path keys refused anywhere in a patch path. */
export const FORBIDDEN_PATH_KEYS: ReadonlySet<string> = new Set([
  "__proto__",
  "prototype",
  "constructor",
])

type Container = Array<unknown> | Record<string, unknown>

const isContainer = (value: unknown): value is Container =>
  typeof value === "object" && value !== null

const hasOwn = (record: object, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(record, key)

const DIGITS = /^(0|[1-9][0-9]*)$/

/** An array index from a path element, or undefined when it is not one. */
const arrayIndex = (element: string | number): number | undefined => {
  if (typeof element === "number")
    return Number.isSafeInteger(element) && element >= 0 ? element : undefined
  return DIGITS.test(element) && element.length <= 15 ? Number(element) : undefined
}

const objectKey = (element: string | number): string | undefined =>
  typeof element === "number"
    ? Number.isSafeInteger(element) && element >= 0
      ? String(element)
      : undefined
    : element

/** Copies `container` unless it was already copied in this batch. */
const own = (container: Container, fresh: WeakSet<object>): Container => {
  if (fresh.has(container)) return container
  const copy: Container = Array.isArray(container) ? container.slice() : { ...container }
  fresh.add(copy)
  return copy
}

type Step = Result.Result<unknown, string>

const applyOne = (root: unknown, patch: PatchOperation, fresh: WeakSet<object>): Step => {
  const { op, path } = patch
  for (const element of path) {
    if (typeof element === "string" && FORBIDDEN_PATH_KEYS.has(element))
      return Result.fail(`forbidden key "${element}" in path`)
  }
  if (op !== "remove" && !("value" in patch)) return Result.fail(`${op} needs a value`)
  if (path.length === 0)
    return op === "remove" ? Result.fail("cannot remove the root") : Result.succeed(patch.value)
  if (!isContainer(root)) return Result.fail("root is not an object or array")

  const newRoot = own(root, fresh)
  let parent: Container = newRoot
  for (let depth = 0; depth < path.length - 1; depth++) {
    const element = path[depth]!
    let child: unknown
    let set: (value: Container) => void
    if (Array.isArray(parent)) {
      const index = arrayIndex(element)
      if (index === undefined || index >= parent.length)
        return Result.fail(`intermediate index ${JSON.stringify(element)} does not exist`)
      const arr: Array<unknown> = parent
      child = arr[index]
      set = (value) => {
        arr[index] = value
      }
    } else {
      const key = objectKey(element)
      if (key === undefined || !hasOwn(parent, key))
        return Result.fail(`intermediate key ${JSON.stringify(element)} does not exist`)
      const rec: Record<string, unknown> = parent
      child = rec[key]
      set = (value) => {
        rec[key] = value
      }
    }
    if (!isContainer(child))
      return Result.fail(`intermediate ${JSON.stringify(element)} is not an object or array`)
    const copy = own(child, fresh)
    set(copy)
    parent = copy
  }

  const last = path[path.length - 1]!
  if (Array.isArray(parent)) {
    const arr: Array<unknown> = parent
    if (last === "-") {
      if (op !== "add") return Result.fail(`"-" is only valid for add`)
      arr.push(patch.value)
      return Result.succeed(newRoot)
    }
    const index = arrayIndex(last)
    if (index === undefined) return Result.fail(`${JSON.stringify(last)} is not an array index`)
    switch (op) {
      case "add":
        if (index > arr.length)
          return Result.fail(`add index ${index} is past the end (${arr.length})`)
        arr.splice(index, 0, patch.value)
        return Result.succeed(newRoot)
      case "replace":
        if (index >= arr.length)
          return Result.fail(`replace index ${index} does not exist (${arr.length})`)
        arr[index] = patch.value
        return Result.succeed(newRoot)
      case "remove":
        if (index >= arr.length)
          return Result.fail(`remove index ${index} does not exist (${arr.length})`)
        arr.splice(index, 1)
        return Result.succeed(newRoot)
    }
  }
  const rec: Record<string, unknown> = parent
  const key = objectKey(last)
  if (key === undefined) return Result.fail(`${JSON.stringify(last)} is not an object key`)
  switch (op) {
    case "add":
      Object.defineProperty(rec, key, {
        value: patch.value,
        writable: true,
        enumerable: true,
        configurable: true,
      })
      return Result.succeed(newRoot)
    case "replace":
      if (!hasOwn(rec, key)) return Result.fail(`replace of missing key ${JSON.stringify(key)}`)
      rec[key] = patch.value
      return Result.succeed(newRoot)
    case "remove":
      if (!hasOwn(rec, key)) return Result.fail(`remove of missing key ${JSON.stringify(key)}`)
      delete rec[key]
      return Result.succeed(newRoot)
  }
}

/**
 * Applies a batch in order. Success: the new root (the input is untouched). Failure: the
 * first patch that does not apply, as a {@link StatePatchError}; the input is untouched too.
 */
export const applyPatches = (
  state: unknown,
  patches: ReadonlyArray<PatchOperation>,
): Result.Result<unknown, StatePatchError> => {
  const fresh = new WeakSet<object>()
  let current = state
  for (let index = 0; index < patches.length; index++) {
    const patch = patches[index]!
    const step = applyOne(current, patch, fresh)
    if (step._tag === "Failure")
      return Result.fail(
        new StatePatchError({ index, op: patch.op, path: patch.path, problem: step.failure }),
      )
    current = step.success
  }
  return Result.succeed(current)
}
