/**
 * Builders of extension `conversationState` values for tests, shaped like the fields Rekall
 * relies on (codex-extension-ipc.md §9) plus a few unknown ones to prove tolerance.
 * Pure; every call returns fresh objects. Test support only.
 */

/** Inputs of {@link conversationState}; everything optional. */
export interface ConversationFixture {
  readonly id?: string
  readonly status?: string
  readonly requests?: ReadonlyArray<unknown>
  readonly unconfirmedTurnSubmissions?: ReadonlyArray<unknown>
  readonly userText?: string
  readonly userTurnStatus?: string
  readonly userTurnStartedAtMs?: number
  readonly compactions?: ReadonlyArray<{ readonly id: string; readonly completed: boolean }>
  readonly tokenUsage?: {
    readonly last: number
    readonly total?: number
    readonly window: number | null
  } | null
  readonly turnHistory?: unknown
}

/** A conversationState with one user turn and one turn holding the given compaction items. */
export const conversationStateFixture = (
  fixture: ConversationFixture = {},
): Record<string, unknown> => ({
  id: fixture.id ?? "thread-1",
  title: "fixture thread",
  hasUnreadTurn: false,
  threadRuntimeStatus: { type: fixture.status ?? "idle", activeFlags: [] },
  requests: [...(fixture.requests ?? [])],
  unconfirmedTurnSubmissions: [...(fixture.unconfirmedTurnSubmissions ?? [])],
  turns: [
    {
      turnId: "user-turn",
      turnStartedAtMs: fixture.userTurnStartedAtMs ?? 100,
      status: fixture.userTurnStatus ?? "completed",
      params: {
        threadId: fixture.id ?? "thread-1",
        input: [{ type: "text", text: fixture.userText ?? "please refactor", text_elements: [] }],
      },
      items: [
        {
          id: "user-item",
          type: "userMessage",
          content: [{ type: "text", text: fixture.userText ?? "please refactor" }],
        },
        { id: "agent-item", type: "agentMessage", text: "done" },
      ],
    },
    {
      turnId: "compaction-turn",
      turnStartedAtMs: 50,
      status: "completed",
      params: { input: [] },
      items: (fixture.compactions ?? [{ id: "old", completed: true }]).map((c) => ({
        id: c.id,
        type: "contextCompaction",
        completed: c.completed,
      })),
    },
  ],
  ...(fixture.turnHistory === undefined ? {} : { turnHistory: fixture.turnHistory }),
  ...(fixture.tokenUsage === null
    ? { latestTokenUsageInfo: null }
    : {
        latestTokenUsageInfo: {
          last: { totalTokens: fixture.tokenUsage?.last ?? 90_000, inputTokens: 1 },
          total: { totalTokens: fixture.tokenUsage?.total ?? 250_000 },
          modelContextWindow:
            fixture.tokenUsage === undefined ? 100_000 : fixture.tokenUsage.window,
        },
      }),
})

/** A pending approval request entry. */
export const approvalRequestFixture = (id: number | string = 1): Record<string, unknown> => ({
  id,
  method: "item/commandExecution/requestApproval",
  params: { threadId: "thread-1", turnId: "user-turn", itemId: "exec-1" },
})

/** A pending user-input request entry. */
export const userInputRequestFixture = (id: number | string = 2): Record<string, unknown> => ({
  id,
  method: "item/tool/requestUserInput",
  params: { threadId: "thread-1" },
  completed: false,
})
