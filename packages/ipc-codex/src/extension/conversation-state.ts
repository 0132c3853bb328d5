/**
 * The typed view of the extension's `conversationState` that Baton acts on
 * (codex-extension-ipc.md §9, rekall-behavior.md §8–§9, §15).
 * Guarantees:
 * - the layout Rekall relies on is enforced: string `threadRuntimeStatus.type`, array
 *   `requests`, array `turns` each with an `items` array, and every `contextCompaction` item in
 *   `turns` has a string `id` and a boolean `completed` — else {@link StateLayoutError};
 *   `turnHistory` items may lack `completed` (tolerated, never a completion);
 * - unknown fields are tolerated everywhere; a malformed `turnHistory` or token usage block is
 *   reported as absent rather than failing the whole view;
 * - the view holds no user text: the latest user turn is summarised by a SHA-256 fingerprint
 *   over the canonical JSON of its id, input and user message items.
 * Pure (hashing aside) and never throws.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { canonicalJson } from "./canonical-json.js"
import { StateLayoutError } from "./errors.js"

const optionalNullable = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(Schema.NullOr(schema))

const ItemSchema = Schema.Struct({
  type: Schema.String,
  id: optionalNullable(Schema.String),
  completed: Schema.optionalKey(Schema.Unknown),
  content: Schema.optionalKey(Schema.Unknown),
})

const TurnSchema = Schema.Struct({
  turnId: optionalNullable(Schema.String),
  id: optionalNullable(Schema.String),
  turnStartedAtMs: optionalNullable(Schema.Number),
  status: optionalNullable(Schema.String),
  params: optionalNullable(
    Schema.Struct({
      input: optionalNullable(Schema.Array(Schema.Unknown)),
      clientUserMessageId: optionalNullable(Schema.String),
    }),
  ),
  items: Schema.Array(ItemSchema),
})
type TurnRecord = typeof TurnSchema.Type

const LenientTurnSchema = Schema.Struct({
  ...TurnSchema.fields,
  items: Schema.optionalKey(Schema.Array(ItemSchema)),
})

const RequestSchema = Schema.Struct({
  id: Schema.optionalKey(Schema.Union([Schema.String, Schema.Number])),
  method: Schema.optionalKey(Schema.String),
  completed: Schema.optionalKey(Schema.Unknown),
})

const UsageSchema = Schema.Struct({ totalTokens: optionalNullable(Schema.Number) })

const TokenUsageSchema = Schema.Struct({
  last: optionalNullable(UsageSchema),
  total: optionalNullable(UsageSchema),
  modelContextWindow: optionalNullable(Schema.Number),
})

const LayoutSchema = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  threadRuntimeStatus: Schema.Struct({ type: Schema.String }),
  requests: Schema.Array(Schema.Unknown),
  turns: Schema.Array(TurnSchema),
  unconfirmedTurnSubmissions: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  turnHistory: Schema.optionalKey(Schema.Unknown),
  latestTokenUsageInfo: Schema.optionalKey(Schema.Unknown),
})

const HistorySchema = Schema.Struct({
  kind: Schema.Literal("canonical"),
  history: Schema.Struct({
    islands: Schema.Array(
      Schema.Struct({ entries: Schema.Array(Schema.Struct({ value: Schema.Unknown })) }),
    ),
    entitiesByKey: Schema.Record(Schema.String, Schema.Unknown),
  }),
})

/** One pending approval or user-input request (no payload). */
export interface ExtensionPendingRequestView {
  readonly id: string | number | undefined
  readonly method: string | undefined
  readonly kind: "approval" | "user-input" | "other"
  readonly completed: boolean
}

/** One item of a turn (type, id and the private completion flag only). */
export interface ExtensionItemView {
  readonly id: string | undefined
  readonly type: string
  readonly completed: boolean | undefined
}

/** One turn, without its text. */
export interface ExtensionTurnView {
  readonly id: string | undefined
  readonly startedAtMs: number | undefined
  readonly status: string | undefined
  readonly clientUserMessageId: string | undefined
  readonly hasUserInput: boolean
  readonly items: ReadonlyArray<ExtensionItemView>
}

/** A `contextCompaction` item and where it was found. */
export interface ExtensionCompactionItemView {
  readonly id: string
  readonly turnId: string | undefined
  readonly completed: boolean | undefined
  readonly source: "turns" | "history"
}

/** Latest token usage telemetry (`latestTokenUsageInfo`). */
export interface ExtensionTokenUsageView {
  readonly lastTotalTokens: number | undefined
  readonly totalTotalTokens: number | undefined
  readonly modelContextWindow: number | null | undefined
}

/** The latest user input boundary, for cancel-on-new-input. */
export interface UserBoundaryView {
  readonly latestUserTurnId: string | undefined
  readonly startedAtMs: number | undefined
  /** SHA-256 hex; the digest of "no-user-input" when there is no user turn. */
  readonly fingerprint: string
  /** The latest user turn ended `interrupted` or `failed`. */
  readonly interrupted: boolean
}

/** What Baton needs from one conversation state. */
export interface ConversationView {
  readonly threadId: string | undefined
  readonly runtimeStatus: string
  /** idle status, no request entries, no non-terminal unconfirmed submission (no debounce). */
  readonly isIdle: boolean
  readonly pendingRequests: ReadonlyArray<ExtensionPendingRequestView>
  readonly unconfirmedSubmissions: number
  readonly turns: ReadonlyArray<ExtensionTurnView>
  /** Turns from canonical `turnHistory`, or undefined when absent or unreadable. */
  readonly historyTurns: ReadonlyArray<ExtensionTurnView> | undefined
  readonly compactions: ReadonlyArray<ExtensionCompactionItemView>
  /** At least one contextCompaction item carried a boolean `completed`. */
  readonly privateCompletionFlagSeen: boolean
  readonly tokenUsage: ExtensionTokenUsageView | undefined
  readonly userBoundary: UserBoundaryView
}

const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** The fingerprint of "no user input". */
export const NO_USER_INPUT_FINGERPRINT = sha256Hex("no-user-input")

const USER_ITEM_TYPES: ReadonlySet<string> = new Set(["userMessage", "steeringUserMessage"])

const nn = <A>(value: A | null | undefined): A | undefined => (value === null ? undefined : value)

const turnIdOf = (turn: TurnRecord): string | undefined => nn(turn.turnId) ?? nn(turn.id)

const hasUserInput = (turn: TurnRecord): boolean =>
  (nn(nn(turn.params)?.input)?.length ?? 0) > 0 ||
  turn.items.some((item) => USER_ITEM_TYPES.has(item.type))

const toTurnView = (turn: TurnRecord): ExtensionTurnView => ({
  id: turnIdOf(turn),
  startedAtMs: nn(turn.turnStartedAtMs),
  status: nn(turn.status),
  clientUserMessageId: nn(nn(turn.params)?.clientUserMessageId),
  hasUserInput: hasUserInput(turn),
  items: turn.items.map((item) => ({
    id: nn(item.id),
    type: item.type,
    completed: typeof item.completed === "boolean" ? item.completed : undefined,
  })),
})

const requestKind = (method: string | undefined): ExtensionPendingRequestView["kind"] => {
  if (method === undefined) return "other"
  if (/approval/i.test(method)) return "approval"
  if (/userinput|elicitation/i.test(method)) return "user-input"
  return "other"
}

const decodeRequest = Schema.decodeUnknownResult(RequestSchema)
const decodeLenientTurn = Schema.decodeUnknownResult(LenientTurnSchema)
const decodeHistory = Schema.decodeUnknownResult(HistorySchema)
const decodeTokenUsage = Schema.decodeUnknownResult(TokenUsageSchema)
const decodeLayout = Schema.decodeUnknownResult(LayoutSchema)

/** Turns of a canonical history, in island/entry order; undefined when unreadable. */
const historyTurns = (turnHistory: unknown): ReadonlyArray<TurnRecord> | undefined => {
  if (turnHistory === undefined || turnHistory === null) return undefined
  const decoded = decodeHistory(turnHistory)
  if (decoded._tag === "Failure") return undefined
  const { islands, entitiesByKey } = decoded.success.history
  const turns: Array<TurnRecord> = []
  for (const island of islands) {
    for (const entry of island.entries) {
      if (
        typeof entry.value !== "string" ||
        !Object.prototype.hasOwnProperty.call(entitiesByKey, entry.value)
      )
        continue
      const turn = decodeLenientTurn(entitiesByKey[entry.value])
      if (turn._tag === "Success") turns.push({ ...turn.success, items: turn.success.items ?? [] })
    }
  }
  return turns
}

const isTerminal = (submission: unknown): boolean =>
  typeof submission === "object" &&
  submission !== null &&
  (submission as { readonly terminal?: unknown }).terminal === true

const userBoundary = (candidates: ReadonlyArray<TurnRecord>): UserBoundaryView => {
  let latest: TurnRecord | undefined
  for (const turn of candidates) {
    if (!hasUserInput(turn)) continue
    const at = nn(turn.turnStartedAtMs) ?? Number.NEGATIVE_INFINITY
    const best =
      latest === undefined ? undefined : (nn(latest.turnStartedAtMs) ?? Number.NEGATIVE_INFINITY)
    if (best === undefined || at >= best) latest = turn
  }
  if (latest === undefined)
    return {
      latestUserTurnId: undefined,
      startedAtMs: undefined,
      fingerprint: NO_USER_INPUT_FINGERPRINT,
      interrupted: false,
    }
  const params = nn(latest.params)
  const fingerprintInput = {
    id: turnIdOf(latest) ?? nn(params?.clientUserMessageId) ?? nn(latest.turnStartedAtMs),
    input: nn(params?.input),
    messages: latest.items
      .filter((item) => USER_ITEM_TYPES.has(item.type))
      .map((item) => ({ id: nn(item.id), content: item.content })),
  }
  const status = nn(latest.status)
  return {
    latestUserTurnId: turnIdOf(latest),
    startedAtMs: nn(latest.turnStartedAtMs),
    fingerprint: sha256Hex(canonicalJson(fingerprintInput)),
    interrupted: status === "interrupted" || status === "failed",
  }
}

const tokenUsage = (raw: unknown): ExtensionTokenUsageView | undefined => {
  if (raw === undefined || raw === null) return undefined
  const decoded = decodeTokenUsage(raw)
  if (decoded._tag === "Failure") return undefined
  const usage = decoded.success
  return {
    lastTotalTokens: nn(nn(usage.last)?.totalTokens),
    totalTotalTokens: nn(nn(usage.total)?.totalTokens),
    modelContextWindow: usage.modelContextWindow,
  }
}

/** Decodes a conversationState into the typed view, or names the layout drift. */
export const decodeConversationState = (
  state: unknown,
): Result.Result<ConversationView, StateLayoutError> => {
  const decoded = decodeLayout(state)
  if (decoded._tag === "Failure")
    return Result.fail(
      new StateLayoutError({ problem: decoded.failure.message.replace(/\s+/g, " ") }),
    )
  const layout = decoded.success

  const compactions: Array<ExtensionCompactionItemView> = []
  let flagSeen = false
  for (const turn of layout.turns) {
    for (const item of turn.items) {
      if (item.type !== "contextCompaction") continue
      const id = nn(item.id)
      if (id === undefined || typeof item.completed !== "boolean")
        return Result.fail(
          new StateLayoutError({
            problem:
              "Unsupported contextCompaction lifecycle: an item in turns lacks a string id or a boolean completed",
          }),
        )
      flagSeen = true
      compactions.push({ id, turnId: turnIdOf(turn), completed: item.completed, source: "turns" })
    }
  }
  const history = historyTurns(layout.turnHistory)
  for (const turn of history ?? []) {
    for (const item of turn.items) {
      const id = nn(item.id)
      if (item.type !== "contextCompaction" || id === undefined) continue
      const completed = typeof item.completed === "boolean" ? item.completed : undefined
      if (completed !== undefined) flagSeen = true
      compactions.push({ id, turnId: turnIdOf(turn), completed, source: "history" })
    }
  }

  const pendingRequests = layout.requests.map((raw): ExtensionPendingRequestView => {
    const request = decodeRequest(raw)
    if (request._tag === "Failure")
      return { id: undefined, method: undefined, kind: "other", completed: false }
    const { id, method, completed } = request.success
    return { id, method, kind: requestKind(method), completed: completed === true }
  })
  const unconfirmedSubmissions = (layout.unconfirmedTurnSubmissions ?? []).filter(
    (s) => !isTerminal(s),
  ).length
  const runtimeStatus = layout.threadRuntimeStatus.type

  return Result.succeed({
    threadId: layout.id,
    runtimeStatus,
    isIdle:
      runtimeStatus === "idle" && layout.requests.length === 0 && unconfirmedSubmissions === 0,
    pendingRequests,
    unconfirmedSubmissions,
    turns: layout.turns.map(toTurnView),
    historyTurns: history?.map(toTurnView),
    compactions,
    privateCompletionFlagSeen: flagSeen,
    tokenUsage: tokenUsage(layout.latestTokenUsageInfo),
    userBoundary: userBoundary([...(history ?? []), ...layout.turns]),
  })
}
