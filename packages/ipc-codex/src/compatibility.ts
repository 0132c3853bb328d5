/**
 * Protocol compatibility against a Codex binary's own JSON Schema
 * (`codex app-server generate-json-schema`). Extracts the "protocol surface" Baton relies on — a
 * flat map from a readable key (`request thread/compact/start params`) to a readable description
 * (`object{required: threadId}`) — checks it against Baton's expectations, and diffs it against a
 * committed baseline. Extraction, checking and diffing are pure; generating the schema spawns the
 * binary once, and results are cached by binary identity (path, size, mtime) so a probe does not
 * pay for a subprocess every time.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, realpath, rename, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, sep } from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SchemaGenerationError } from "./errors.js"

/** Flat map of the protocol facts Baton relies on: key → description (`missing` when absent). */
export type ProtocolSurface = Readonly<Record<string, string>>

type JsonSchema = Readonly<Record<string, unknown>>

const asObject = (value: unknown): JsonSchema | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonSchema)
    : null

const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const strings = (value: unknown): ReadonlyArray<string> =>
  asArray(value).filter((v): v is string => typeof v === "string")

interface Bundle {
  readonly definitions: Readonly<Record<string, unknown>>
}

const toBundle = (bundle: unknown): Bundle => ({
  definitions: asObject(asObject(bundle)?.["definitions"]) ?? {},
})

const resolveRef = (bundle: Bundle, node: JsonSchema | null, depth = 0): JsonSchema | null => {
  if (node === null || depth > 32) return node
  const allOf = asArray(node["allOf"])
  if (allOf.length === 1 && node["properties"] === undefined)
    return resolveRef(bundle, asObject(allOf[0]), depth + 1)
  const ref = node["$ref"]
  if (typeof ref !== "string") return node
  const name = /^#\/definitions\/(.+)$/.exec(ref)?.[1]
  return name === undefined
    ? null
    : resolveRef(bundle, asObject(bundle.definitions[name]), depth + 1)
}

/** Drops a `null` branch of `anyOf`/`oneOf` (how optional members are spelled). */
const nonNull = (bundle: Bundle, node: JsonSchema | null): JsonSchema | null => {
  const resolved = resolveRef(bundle, node)
  if (resolved === null) return null
  for (const key of ["anyOf", "oneOf"]) {
    const branches = asArray(resolved[key]).map((b) => resolveRef(bundle, asObject(b)))
    const real = branches.filter((b) => b !== null && b["type"] !== "null")
    if (branches.length > 0 && real.length === 1 && resolved["properties"] === undefined)
      return real[0] ?? null
  }
  return resolved
}

const variantTag = (variant: JsonSchema | null, discriminator: string): ReadonlyArray<string> =>
  strings(asObject(asObject(variant?.["properties"])?.[discriminator])?.["enum"])

const variants = (bundle: Bundle, node: JsonSchema | null): ReadonlyArray<JsonSchema> =>
  asArray(node?.["oneOf"] ?? node?.["anyOf"])
    .map((v) => resolveRef(bundle, asObject(v)))
    .filter((v): v is JsonSchema => v !== null)

const typeNames = (bundle: Bundle, node: JsonSchema | null): ReadonlyArray<string> => {
  const resolved = resolveRef(bundle, node)
  if (resolved === null) return []
  const own = resolved["type"]
  const names = new Set<string>(typeof own === "string" ? [own] : strings(own))
  for (const branch of variants(bundle, resolved))
    for (const name of typeNames(bundle, branch)) names.add(name)
  if (names.size === 0 && resolved["properties"] !== undefined) names.add("object")
  return [...names].sort()
}

const describe = (bundle: Bundle, node: JsonSchema | null): string => {
  const resolved = nonNull(bundle, node)
  if (resolved === null) return "missing"
  const nullable = typeNames(bundle, node).includes("null") ? "|null" : ""
  const tagged = variants(bundle, resolved)
    .map((v) => variantTag(v, "type")[0])
    .filter((t): t is string => t !== undefined)
  if (tagged.length > 0) return `union{type: ${[...tagged].sort().join("|")}}${nullable}`
  if (resolved["properties"] !== undefined || resolved["type"] === "object") {
    return `object{required: ${[...strings(resolved["required"])].sort().join(",")}}${nullable}`
  }
  const enumValues = strings(resolved["enum"])
  if (enumValues.length > 0) return `enum(${[...enumValues].sort().join("|")})${nullable}`
  const names = typeNames(bundle, resolved).filter((n) => n !== "null")
  return names.length === 0 ? `any${nullable}` : `${names.join("|")}${nullable}`
}

type Step =
  | { readonly _tag: "Property"; readonly name: string }
  | { readonly _tag: "Variant"; readonly tag: string }
  | { readonly _tag: "Items" }

const parsePath = (path: string): ReadonlyArray<Step> =>
  path === ""
    ? []
    : path.split(".").flatMap((segment): ReadonlyArray<Step> => {
        const steps: Array<Step> = []
        const name = /^[^[]*/.exec(segment)?.[0] ?? ""
        if (name !== "") steps.push({ _tag: "Property", name })
        for (const m of segment.matchAll(/\[([^\]]*)\]/g)) {
          const inner = m[1] ?? ""
          steps.push(
            inner === ""
              ? { _tag: "Items" }
              : { _tag: "Variant", tag: inner.replace(/^type=/, "") },
          )
        }
        return steps
      })

/** Walks a path from a node; returns the node and whether its last property step was required. */
const walk = (
  bundle: Bundle,
  start: JsonSchema | null,
  path: string,
): { readonly node: JsonSchema | null; readonly required: boolean | null } => {
  let node = start
  let required: boolean | null = null
  for (const step of parsePath(path)) {
    const current = nonNull(bundle, node)
    if (current === null) return { node: null, required: null }
    switch (step._tag) {
      case "Property": {
        const props = asObject(current["properties"])
        const next = asObject(props?.[step.name])
        required = strings(current["required"]).includes(step.name)
        node = next
        break
      }
      case "Variant":
        node =
          variants(bundle, current).find((v) => variantTag(v, "type").includes(step.tag)) ?? null
        required = null
        break
      case "Items":
        node = asObject(current["items"])
        required = null
        break
    }
    if (node === null) return { node: null, required: null }
  }
  return { node, required }
}

const rootOf = (bundle: Bundle, union: string, method: string): JsonSchema | null => {
  const root = resolveRef(bundle, asObject(bundle.definitions[union]))
  const variant = variants(bundle, root).find((v) => variantTag(v, "method").includes(method))
  if (variant === undefined) return null
  return asObject(asObject(variant["properties"])?.["params"]) ?? {}
}

/** One fact of the surface: where to look and what key to report it under. */
interface SurfaceEntry {
  readonly root: "request" | "notification" | "serverRequest" | "definition"
  readonly name: string
  readonly path: string
}

const ENTRIES: ReadonlyArray<SurfaceEntry> = [
  { root: "request", name: "initialize", path: "clientInfo.name" },
  { root: "request", name: "thread/compact/start", path: "" },
  { root: "request", name: "thread/compact/start", path: "threadId" },
  { root: "request", name: "turn/start", path: "" },
  { root: "request", name: "turn/start", path: "input" },
  { root: "request", name: "turn/start", path: "input[][type=text].text" },
  { root: "request", name: "turn/start", path: "input[][type=text].text_elements" },
  { root: "request", name: "turn/interrupt", path: "" },
  { root: "request", name: "thread/resume", path: "" },
  { root: "request", name: "thread/resume", path: "excludeTurns" },
  { root: "request", name: "thread/unsubscribe", path: "" },
  { root: "request", name: "thread/list", path: "" },
  { root: "request", name: "thread/loaded/list", path: "" },
  { root: "request", name: "account/rateLimits/read", path: "" },
  { root: "request", name: "account/read", path: "" },
  { root: "definition", name: "GetAccountRateLimitsResponse", path: "" },
  { root: "definition", name: "GetAccountRateLimitsResponse", path: "ordinaryUsageAllowed" },
  { root: "definition", name: "GetAccountRateLimitsResponse", path: "rateLimits" },
  { root: "notification", name: "item/started", path: "" },
  { root: "notification", name: "item/started", path: "item" },
  { root: "notification", name: "item/started", path: "item[type=contextCompaction].id" },
  { root: "notification", name: "item/completed", path: "" },
  { root: "notification", name: "item/completed", path: "item[type=contextCompaction].id" },
  { root: "notification", name: "turn/started", path: "turn.id" },
  { root: "notification", name: "turn/completed", path: "turn.status" },
  { root: "notification", name: "turn/completed", path: "turn.error" },
  { root: "notification", name: "thread/tokenUsage/updated", path: "" },
  { root: "notification", name: "thread/tokenUsage/updated", path: "tokenUsage.last.totalTokens" },
  { root: "notification", name: "thread/tokenUsage/updated", path: "tokenUsage.total.totalTokens" },
  {
    root: "notification",
    name: "thread/tokenUsage/updated",
    path: "tokenUsage.modelContextWindow",
  },
  { root: "notification", name: "thread/status/changed", path: "status" },
  { root: "notification", name: "thread/status/changed", path: "status[type=active].activeFlags" },
  { root: "notification", name: "account/rateLimits/updated", path: "rateLimits" },
  { root: "notification", name: "account/rateLimits/updated", path: "rateLimits.primary" },
  {
    root: "notification",
    name: "account/rateLimits/updated",
    path: "rateLimits.primary.usedPercent",
  },
  { root: "notification", name: "error", path: "" },
  { root: "notification", name: "error", path: "error.codexErrorInfo" },
  { root: "notification", name: "serverRequest/resolved", path: "" },
  { root: "serverRequest", name: "item/commandExecution/requestApproval", path: "" },
]

const keyOf = (entry: SurfaceEntry) =>
  `${entry.root} ${entry.name} ${entry.path === "" ? "params" : `params.${entry.path}`}`.replace(
    /^definition (\S+) params/,
    "definition $1",
  )

/** Extracts Baton's protocol surface from a schema bundle (`codex_app_server_protocol.v2.schemas.json`). */
export const extractProtocolSurface = (bundleJson: unknown): ProtocolSurface => {
  const bundle = toBundle(bundleJson)
  const surface: Record<string, string> = {}
  for (const entry of ENTRIES) {
    const start =
      entry.root === "definition"
        ? asObject(bundle.definitions[entry.name])
        : rootOf(
            bundle,
            entry.root === "request"
              ? "ClientRequest"
              : entry.root === "notification"
                ? "ServerNotification"
                : "ServerRequest",
            entry.name,
          )
    if (start === null) {
      surface[keyOf(entry)] = "missing"
      continue
    }
    const { node, required } = walk(bundle, start, entry.path)
    const description = describe(bundle, node)
    surface[keyOf(entry)] =
      required === null || description === "missing"
        ? description
        : `${description} (${required ? "required" : "optional"})`
  }
  return surface
}

/** One expectation of Baton about the protocol. */
export interface CompatibilityCheck {
  readonly id: string
  readonly description: string
  readonly ok: boolean
  /** What differs, one line per surface key (empty when ok). */
  readonly problems: ReadonlyArray<string>
}

/** The outcome of checking one binary's schema. */
export interface CompatibilityReport {
  readonly ok: boolean
  readonly checks: ReadonlyArray<CompatibilityCheck>
  readonly surface: ProtocolSurface
}

type Expectation = (value: string) => string | null

const requiredSet = (value: string): ReadonlyArray<string> | null => {
  const m = /object\{required: ([^}]*)\}/.exec(value)
  return m === null ? null : (m[1] ?? "").split(",").filter((s) => s !== "")
}
const requiresExactly =
  (...names: ReadonlyArray<string>): Expectation =>
  (value) => {
    const required = requiredSet(value)
    const want = [...names].sort().join(",")
    return required !== null && [...required].sort().join(",") === want
      ? null
      : `expected an object requiring exactly [${want}]`
  }
const requiresAtLeast =
  (...names: ReadonlyArray<string>): Expectation =>
  (value) => {
    const required = requiredSet(value)
    const missing = names.filter((n) => !(required ?? []).includes(n))
    return required !== null && missing.length === 0
      ? null
      : `expected an object requiring [${names.join(",")}]`
  }
const present: Expectation = (value) => (value === "missing" ? "expected it to exist" : null)
const isType =
  (type: string, options: { readonly required?: boolean } = {}): Expectation =>
  (value) => {
    const ok =
      new RegExp(`(^|\\|)${type}(\\||\\s|$|\\{)`).test(value) &&
      (options.required !== true || value.endsWith("(required)"))
    return ok ? null : `expected ${type}${options.required === true ? " (required)" : ""}`
  }
const unionIncludes =
  (...tags: ReadonlyArray<string>): Expectation =>
  (value) => {
    const m = /union\{type: ([^}]*)\}/.exec(value)
    const have = (m?.[1] ?? "").split("|")
    const missing = tags.filter((t) => !have.includes(t))
    return m !== null && missing.length === 0
      ? null
      : `expected a union with type ${tags.join("|")}`
  }

interface CheckSpec {
  readonly id: string
  readonly description: string
  readonly expect: Readonly<Record<string, Expectation>>
}

/** Bumped whenever the checks change, so cached reports are recomputed. */
export const COMPATIBILITY_CHECKER_VERSION = "1"

const CHECKS: ReadonlyArray<CheckSpec> = [
  {
    id: "compact-start",
    description: "thread/compact/start requires only threadId (string)",
    expect: {
      "request thread/compact/start params": requiresExactly("threadId"),
      "request thread/compact/start params.threadId": isType("string", { required: true }),
    },
  },
  {
    id: "compaction-items",
    description:
      "item/started and item/completed carry threadId, turnId, item with a contextCompaction variant (string id)",
    expect: {
      "notification item/started params": requiresAtLeast("threadId", "turnId", "item"),
      "notification item/completed params": requiresAtLeast("threadId", "turnId", "item"),
      "notification item/started params.item[type=contextCompaction].id": isType("string", {
        required: true,
      }),
      "notification item/completed params.item[type=contextCompaction].id": isType("string", {
        required: true,
      }),
    },
  },
  {
    id: "turn-lifecycle",
    description: "turn/started carries turn.id; turn/completed carries turn.status and turn.error",
    expect: {
      "notification turn/started params.turn.id": isType("string", { required: true }),
      "notification turn/completed params.turn.status": present,
      "notification turn/completed params.turn.error": present,
    },
  },
  {
    id: "token-usage",
    description:
      "thread/tokenUsage/updated carries threadId, turnId, tokenUsage.{last,total}.totalTokens and modelContextWindow",
    expect: {
      "notification thread/tokenUsage/updated params": requiresAtLeast(
        "threadId",
        "turnId",
        "tokenUsage",
      ),
      "notification thread/tokenUsage/updated params.tokenUsage.last.totalTokens": isType(
        "integer",
        { required: true },
      ),
      "notification thread/tokenUsage/updated params.tokenUsage.total.totalTokens": isType(
        "integer",
        { required: true },
      ),
      "notification thread/tokenUsage/updated params.tokenUsage.modelContextWindow": present,
    },
  },
  {
    id: "thread-status",
    description:
      "thread/status/changed has idle/active/notLoaded/systemError, active with activeFlags",
    expect: {
      "notification thread/status/changed params.status": unionIncludes(
        "active",
        "idle",
        "notLoaded",
        "systemError",
      ),
      "notification thread/status/changed params.status[type=active].activeFlags": isType("array", {
        required: true,
      }),
    },
  },
  {
    id: "rate-limit-updates",
    description:
      "account/rateLimits/updated carries a rateLimits snapshot with primary.usedPercent",
    expect: {
      "notification account/rateLimits/updated params.rateLimits": present,
      "notification account/rateLimits/updated params.rateLimits.primary": present,
      "notification account/rateLimits/updated params.rateLimits.primary.usedPercent": present,
    },
  },
  {
    id: "rate-limit-read",
    description:
      "account/rateLimits/read exists and its result has rateLimits and ordinaryUsageAllowed",
    expect: {
      "request account/rateLimits/read params": present,
      "definition GetAccountRateLimitsResponse.rateLimits": present,
      "definition GetAccountRateLimitsResponse.ordinaryUsageAllowed": isType("boolean"),
    },
  },
  {
    id: "turn-start",
    description:
      "turn/start requires threadId and input; text input is {type: text, text, text_elements}",
    expect: {
      "request turn/start params": requiresAtLeast("threadId", "input"),
      "request turn/start params.input": isType("array", { required: true }),
      "request turn/start params.input[][type=text].text": isType("string", { required: true }),
      "request turn/start params.input[][type=text].text_elements": isType("array"),
    },
  },
  {
    id: "thread-methods",
    description:
      "thread/resume, thread/unsubscribe, thread/list, thread/loaded/list, turn/interrupt, account/read exist",
    expect: {
      "request thread/resume params": requiresAtLeast("threadId"),
      "request thread/resume params.excludeTurns": present,
      "request thread/unsubscribe params": requiresAtLeast("threadId"),
      "request thread/list params": present,
      "request thread/loaded/list params": present,
      "request turn/interrupt params": requiresAtLeast("threadId", "turnId"),
      "request account/read params": present,
    },
  },
  {
    id: "errors-and-requests",
    description:
      "error notifications carry error.codexErrorInfo and willRetry; serverRequest/resolved carries threadId, requestId",
    expect: {
      "notification error params": requiresAtLeast("error", "threadId", "willRetry"),
      "notification error params.error.codexErrorInfo": present,
      "notification serverRequest/resolved params": requiresAtLeast("threadId", "requestId"),
      "serverRequest item/commandExecution/requestApproval params": requiresAtLeast(
        "threadId",
        "turnId",
      ),
    },
  },
]

/** Checks a surface against Baton's expectations. */
export const checkCompatibility = (surface: ProtocolSurface): CompatibilityReport => {
  const checks = CHECKS.map((spec): CompatibilityCheck => {
    const problems: Array<string> = []
    for (const [key, expectation] of Object.entries(spec.expect)) {
      const value = surface[key] ?? "missing"
      const problem = expectation(value)
      if (problem !== null) problems.push(`${key}: ${problem}; saw ${value}`)
    }
    return { id: spec.id, description: spec.description, ok: problems.length === 0, problems }
  })
  return { ok: checks.every((c) => c.ok), checks, surface }
}

/** A readable, multi-line report (one line per check, indented problems). */
export const formatCompatibilityReport = (
  report: CompatibilityReport,
  heading = "codex app-server protocol",
): string => {
  const failed = report.checks.filter((c) => !c.ok).length
  const lines = [`${heading}: ${failed === 0 ? "compatible" : `${failed} incompatible check(s)`}`]
  for (const check of report.checks) {
    lines.push(`  ${check.ok ? "ok  " : "FAIL"} ${check.description}`)
    for (const problem of check.problems) lines.push(`         ${problem}`)
  }
  return lines.join("\n")
}

/** Differences between a baseline surface and a current one, one readable line each (empty = same). */
export const diffProtocolSurface = (
  baseline: ProtocolSurface,
  current: ProtocolSurface,
): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const key of new Set([...Object.keys(baseline), ...Object.keys(current)])) {
    const before = baseline[key]
    const after = current[key]
    if (before === after) continue
    if (before === undefined) lines.push(`+ ${key}: ${after ?? ""}`)
    else if (after === undefined) lines.push(`- ${key}: ${before}`)
    else lines.push(`~ ${key}: ${before}  →  ${after}`)
  }
  return lines
}

/** The schema bundle file written by `generate-json-schema`. */
export const SCHEMA_BUNDLE_FILE = "codex_app_server_protocol.v2.schemas.json"

/** Per-type files read when the bundle lacks a root (0.169.0's v2 bundle has no `ServerRequest`). */
export const SCHEMA_ROOT_FILES: ReadonlyArray<string> = [
  "ServerRequest.json",
  "ClientRequest.json",
  "ServerNotification.json",
  "v2/GetAccountRateLimitsResponse.json",
]

/**
 * Reads a `generate-json-schema` output directory into one bundle: the v2 bundle when present,
 * completed by the per-type files for any root it lacks (definitions already present win).
 */
export const loadSchemaBundle = (dir: string): Effect.Effect<unknown, SchemaGenerationError> =>
  Effect.tryPromise({
    try: async () => {
      const text = await readFile(join(dir, SCHEMA_BUNDLE_FILE), "utf8").catch(() => null)
      const definitions: Record<string, unknown> = {
        ...(asObject(
          asObject(text === null ? null : (JSON.parse(text) as unknown))?.["definitions"],
        ) ?? {}),
      }
      for (const file of SCHEMA_ROOT_FILES) {
        const root = file.replace(/^v2\//, "").replace(/\.json$/, "")
        if (definitions[root] !== undefined) continue
        const rootText = await readFile(join(dir, file), "utf8").catch(() => null)
        if (rootText === null) continue
        const json = asObject(JSON.parse(rootText) as unknown) ?? {}
        for (const [name, definition] of Object.entries(asObject(json["definitions"]) ?? {}))
          definitions[name] ??= definition
        definitions[root] = json
      }
      if (Object.keys(definitions).length === 0) throw new Error(`no schema files in ${dir}`)
      return { definitions }
    },
    catch: (cause) =>
      new SchemaGenerationError({
        binary: dir,
        reason: `cannot read schema files: ${String(cause)}`,
      }),
  })

/** Runs `<binary> app-server generate-json-schema` into a private temp dir and returns the bundle. */
export const generateSchemaBundle = (
  binary: string,
  options: { readonly timeoutMs?: number } = {},
): Effect.Effect<unknown, SchemaGenerationError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => mkdtemp(join(tmpdir(), "baton-codex-schema-")),
      catch: (cause) =>
        new SchemaGenerationError({ binary, reason: `cannot create a temp dir: ${String(cause)}` }),
    }),
    (dir) =>
      Effect.callback<void, SchemaGenerationError>((resume) => {
        const child = execFile(
          binary,
          ["app-server", "generate-json-schema", "--out", dir],
          { timeout: options.timeoutMs ?? 15_000, maxBuffer: 1024 * 1024 },
          (error, _stdout, stderr) =>
            resume(
              error === null
                ? Effect.void
                : Effect.fail(
                    new SchemaGenerationError({
                      binary,
                      reason: `${error.message} ${stderr}`.trim(),
                    }),
                  ),
            ),
        )
        return Effect.sync(() => child.kill("SIGKILL"))
      }).pipe(Effect.andThen(loadSchemaBundle(dir))),
    // Only ever delete what we created: a `baton-codex-schema-*` directory directly under tmpdir.
    (dir) =>
      dir.startsWith(join(tmpdir(), "baton-codex-schema-")) &&
      !dir.slice(tmpdir().length + 1).includes(sep)
        ? Effect.promise(() => rm(dir, { recursive: true, force: true }))
        : Effect.void,
  )

/** Identity of a binary for caching: real path, size and mtime. */
export interface BinaryIdentity {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
}

/** Options for `probeCompatibility`. */
export interface CompatibilityProbeOptions {
  readonly binary: string
  /** Directory holding the cache file (created if missing). */
  readonly cacheDir: string
  /** How to obtain the schema bundle (defaults to running the binary's generator). */
  readonly generate?: (binary: string) => Effect.Effect<unknown, SchemaGenerationError>
}

/** A probe result and whether it came from the cache. */
export interface CompatibilityProbe {
  readonly identity: BinaryIdentity
  readonly report: CompatibilityReport
  readonly fromCache: boolean
}

const CACHE_FILE = "codex-compatibility.json"
const MAX_CACHE_ENTRIES = 16

const CacheFileSchema = Schema.Struct({
  checkerVersion: Schema.String,
  entries: Schema.Array(
    Schema.Struct({
      key: Schema.String,
      surface: Schema.Record(Schema.String, Schema.String),
    }),
  ),
})
type CacheFile = typeof CacheFileSchema.Type

const identityKey = (identity: BinaryIdentity) =>
  `${identity.path}|${identity.size}|${Math.trunc(identity.mtimeMs)}`

const readCache = (file: string): Effect.Effect<CacheFile | null> =>
  Effect.promise(() => readFile(file, "utf8").catch(() => null)).pipe(
    Effect.map((text) => {
      if (text === null) return null
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return null
      }
      const decoded = Schema.decodeUnknownResult(CacheFileSchema)(json)
      return Result.isSuccess(decoded) &&
        decoded.success.checkerVersion === COMPATIBILITY_CHECKER_VERSION
        ? decoded.success
        : null
    }),
  )

/** Identity (real path, size, mtime) of a binary. */
export const binaryIdentity = (
  binary: string,
): Effect.Effect<BinaryIdentity, SchemaGenerationError> =>
  Effect.tryPromise({
    try: async () => {
      const path = await realpath(binary)
      const info = await stat(path)
      return { path, size: info.size, mtimeMs: info.mtimeMs }
    },
    catch: (cause) =>
      new SchemaGenerationError({ binary, reason: `cannot stat the binary: ${String(cause)}` }),
  })

/**
 * Checks a binary's protocol, from the cache when the same binary (path, size, mtime) was
 * checked before; otherwise generates its schema once and stores the extracted surface.
 */
export const probeCompatibility = (
  options: CompatibilityProbeOptions,
): Effect.Effect<CompatibilityProbe, SchemaGenerationError> =>
  Effect.gen(function* () {
    const identity = yield* binaryIdentity(options.binary)
    const key = identityKey(identity)
    const file = join(options.cacheDir, CACHE_FILE)
    const cache = yield* readCache(file)
    const hit = cache?.entries.find((e) => e.key === key)
    if (hit !== undefined)
      return { identity, report: checkCompatibility(hit.surface), fromCache: true }
    const bundle = yield* (options.generate ?? generateSchemaBundle)(identity.path)
    const surface = extractProtocolSurface(bundle)
    const entries = [
      ...(cache?.entries ?? []).filter((e) => e.key !== key),
      { key, surface },
    ].slice(-MAX_CACHE_ENTRIES)
    const next: CacheFile = { checkerVersion: COMPATIBILITY_CHECKER_VERSION, entries }
    // A cache that cannot be written only costs a regeneration next time.
    yield* Effect.promise(async () => {
      await mkdir(options.cacheDir, { recursive: true, mode: 0o700 })
      const temp = `${file}.${process.pid}.tmp`
      await writeFile(temp, JSON.stringify(next), { mode: 0o600 })
      await rename(temp, file)
    }).pipe(Effect.catchCause(() => Effect.void))
    return { identity, report: checkCompatibility(surface), fromCache: false }
  })
