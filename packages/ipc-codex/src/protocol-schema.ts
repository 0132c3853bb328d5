/**
 * effect/Schema decoders for the slice of the Codex app-server protocol Baton reads. Every schema
 * is lenient by construction: unknown members are ignored, members Baton does not need are
 * optional, and nullable members accept absence. A shape that still fails to decode is protocol
 * drift and is reported as such, never thrown.
 */
import * as Schema from "effect/Schema"

const OptionalNullableString = Schema.optionalKey(Schema.NullOr(Schema.String))
const OptionalNullableNumber = Schema.optionalKey(Schema.NullOr(Schema.Number))

/** A JSON-RPC id: the server uses numbers, clients may use strings. */
export const RequestIdSchema = Schema.Union([Schema.String, Schema.Number])

/** Any message on the wire. `jsonrpc`, `params` and unknown members may be absent or extra. */
export const WireEnvelope = Schema.Struct({
  id: Schema.optionalKey(Schema.NullOr(RequestIdSchema)),
  method: Schema.optionalKey(Schema.String),
  params: Schema.optionalKey(Schema.Unknown),
  result: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Unknown),
})

/** The `error` member of a JSON-RPC error response. */
export const WireError = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown),
})

/** `ThreadStatus`: `{type}` plus `activeFlags` when active. Unknown types decode and are flagged later. */
export const ThreadStatusSchema = Schema.Struct({
  type: Schema.String,
  activeFlags: Schema.optionalKey(Schema.Array(Schema.String)),
})

/** `TurnError`: a failed or interrupted turn's error. */
export const TurnErrorSchema = Schema.Struct({
  message: Schema.String,
  codexErrorInfo: Schema.optionalKey(Schema.NullOr(Schema.Unknown)),
  additionalDetails: OptionalNullableString,
})

/** The members of `Turn` Baton reads. */
export const TurnSchema = Schema.Struct({
  id: Schema.String,
  status: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.NullOr(TurnErrorSchema)),
})

/** The members of a `ThreadItem` Baton reads: its kind and id. */
export const ItemSchema = Schema.Struct({
  type: Schema.String,
  id: Schema.String,
})

/** `TokenUsageBreakdown`; only `totalTokens` is required. */
export const TokenUsageBreakdownSchema = Schema.Struct({
  totalTokens: Schema.Number,
  inputTokens: Schema.optionalKey(Schema.Number),
  cachedInputTokens: Schema.optionalKey(Schema.Number),
  outputTokens: Schema.optionalKey(Schema.Number),
  reasoningOutputTokens: Schema.optionalKey(Schema.Number),
})

/** `ThreadTokenUsage`: `last` is current context occupancy, `total` is cumulative. */
export const TokenUsageSchema = Schema.Struct({
  total: TokenUsageBreakdownSchema,
  last: TokenUsageBreakdownSchema,
  modelContextWindow: OptionalNullableNumber,
})

/** `RateLimitWindow`. */
export const RateLimitWindowSchema = Schema.Struct({
  usedPercent: Schema.Number,
  windowDurationMins: OptionalNullableNumber,
  resetsAt: OptionalNullableNumber,
})

/** `CreditsSnapshot`. */
export const CreditsSchema = Schema.Struct({
  hasCredits: Schema.Boolean,
  unlimited: Schema.Boolean,
  balance: OptionalNullableString,
})

/** `RateLimitSnapshot` as sent by reads and by sparse `account/rateLimits/updated` updates. */
export const RateLimitSnapshotSchema = Schema.Struct({
  limitId: OptionalNullableString,
  limitName: OptionalNullableString,
  normalModelSlug: OptionalNullableString,
  primary: Schema.optionalKey(Schema.NullOr(RateLimitWindowSchema)),
  secondary: Schema.optionalKey(Schema.NullOr(RateLimitWindowSchema)),
  credits: Schema.optionalKey(Schema.NullOr(CreditsSchema)),
  spendControlReached: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  planType: OptionalNullableString,
  rateLimitReachedType: OptionalNullableString,
})

/** Notification params, one schema per method Baton interprets. */
export const NotificationParams = {
  "thread/status/changed": Schema.Struct({ threadId: Schema.String, status: ThreadStatusSchema }),
  "thread/started": Schema.Struct({
    thread: Schema.Struct({ id: Schema.String, status: Schema.optionalKey(ThreadStatusSchema) }),
  }),
  "thread/closed": Schema.Struct({ threadId: Schema.String }),
  "turn/started": Schema.Struct({ threadId: Schema.String, turn: TurnSchema }),
  "turn/completed": Schema.Struct({ threadId: Schema.String, turn: TurnSchema }),
  "item/started": Schema.Struct({
    threadId: Schema.String,
    turnId: Schema.String,
    item: ItemSchema,
  }),
  "item/completed": Schema.Struct({
    threadId: Schema.String,
    turnId: Schema.String,
    item: ItemSchema,
  }),
  "thread/tokenUsage/updated": Schema.Struct({
    threadId: Schema.String,
    turnId: Schema.String,
    tokenUsage: TokenUsageSchema,
  }),
  "account/rateLimits/updated": Schema.Struct({ rateLimits: RateLimitSnapshotSchema }),
  error: Schema.Struct({
    error: TurnErrorSchema,
    willRetry: Schema.optionalKey(Schema.Boolean),
    threadId: Schema.String,
    turnId: OptionalNullableString,
  }),
  "thread/compacted": Schema.Struct({ threadId: Schema.String, turnId: Schema.String }),
  "serverRequest/resolved": Schema.Struct({ threadId: Schema.String, requestId: RequestIdSchema }),
} as const

/** The thread-related members of a server→client request's params (approvals, user input). */
export const ServerRequestParamsSchema = Schema.Struct({
  threadId: Schema.optionalKey(Schema.String),
  turnId: Schema.optionalKey(Schema.String),
  itemId: Schema.optionalKey(Schema.String),
})

/** `initialize` result. */
export const InitializeResultSchema = Schema.Struct({
  userAgent: Schema.String,
  codexHome: Schema.optionalKey(Schema.String),
  platformFamily: Schema.optionalKey(Schema.String),
  platformOs: Schema.optionalKey(Schema.String),
})

/** The members of `Thread` Baton reads (list and resume results). */
export const ThreadSummarySchema = Schema.Struct({
  id: Schema.String,
  status: Schema.optionalKey(ThreadStatusSchema),
  preview: Schema.optionalKey(Schema.String),
  name: OptionalNullableString,
  cwd: OptionalNullableString,
  path: OptionalNullableString,
  modelProvider: Schema.optionalKey(Schema.String),
  model: OptionalNullableString,
  cliVersion: Schema.optionalKey(Schema.String),
  createdAt: Schema.optionalKey(Schema.Number),
  updatedAt: Schema.optionalKey(Schema.Number),
  source: Schema.optionalKey(Schema.Unknown),
})

/** Results of the requests Baton sends. */
export const ResultSchemas = {
  "thread/resume": Schema.Struct({ thread: ThreadSummarySchema }),
  "thread/read": Schema.Struct({ thread: ThreadSummarySchema }),
  "thread/unsubscribe": Schema.Struct({
    status: Schema.Literals(["unsubscribed", "notSubscribed", "notLoaded"]),
  }),
  "thread/list": Schema.Struct({
    data: Schema.Array(ThreadSummarySchema),
    nextCursor: OptionalNullableString,
  }),
  "thread/loaded/list": Schema.Struct({
    data: Schema.Array(Schema.String),
    nextCursor: OptionalNullableString,
  }),
  "thread/compact/start": Schema.Struct({}),
  "turn/start": Schema.Struct({ turn: TurnSchema }),
  "turn/interrupt": Schema.Struct({}),
  "account/rateLimits/read": Schema.Struct({
    ordinaryUsageAllowed: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
    rateLimits: RateLimitSnapshotSchema,
    rateLimitsByLimitId: Schema.optionalKey(
      Schema.NullOr(Schema.Record(Schema.String, RateLimitSnapshotSchema)),
    ),
  }),
  "account/read": Schema.Struct({
    account: Schema.optionalKey(
      Schema.NullOr(
        Schema.Struct({
          type: Schema.String,
          email: OptionalNullableString,
          planType: OptionalNullableString,
        }),
      ),
    ),
    requiresOpenaiAuth: Schema.optionalKey(Schema.Boolean),
  }),
} as const

/** Decoded `ThreadStatus`. */
export type WireThreadStatus = typeof ThreadStatusSchema.Type
/** Decoded `TurnError`. */
export type WireTurnError = typeof TurnErrorSchema.Type
/** Decoded `Turn` (the members Baton reads). */
export type WireTurn = typeof TurnSchema.Type
/** Decoded `ThreadItem` (kind and id). */
export type WireItem = typeof ItemSchema.Type
/** Decoded `TokenUsageBreakdown`. */
export type TokenUsageBreakdown = typeof TokenUsageBreakdownSchema.Type
/** Decoded `ThreadTokenUsage`. */
export type WireTokenUsage = typeof TokenUsageSchema.Type
/** Decoded `RateLimitWindow`. */
export type RateLimitWindow = typeof RateLimitWindowSchema.Type
/** Decoded `RateLimitSnapshot`. */
export type RateLimitSnapshot = typeof RateLimitSnapshotSchema.Type
/** Decoded `Thread` summary. */
export type ThreadSummary = typeof ThreadSummarySchema.Type
/** Decoded `initialize` result. */
export type InitializeResult = typeof InitializeResultSchema.Type
