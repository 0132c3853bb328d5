/**
 * The two owner writes Baton performs, as exact params and acknowledgement checks
 * (codex-extension-ipc.md §10):
 * - `thread-follower-compact-thread`: params `{conversationId}`, no instructions; accepted only
 *   when `result.ok === true` (an acknowledgement, not completion);
 * - `thread-follower-start-turn`: params `{conversationId, turnStart: {request: {threadId,
 *   clientUserMessageId, input: [{type: "text", text, text_elements: []}]}, context:
 *   {inheritThreadSettings: true}}}`, never a model, approval or sandbox override; accepted only
 *   with `result.result.turn.id` and status `inProgress` or `completed`;
 * - `thread-follower-interrupt-turn`: params `{conversationId, mode: "user-stop",
 *   expectedTurnId}` (the owner stops only that turn); accepted only with `interruptedTurnId`,
 *   a string or null (null: no such turn was running).
 * Pure; never throws.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/** Params of `thread-follower-compact-thread`. */
export const compactThreadParams = (
  conversationId: string,
): { readonly conversationId: string } => ({
  conversationId,
})

/** What a follow-up turn says; `clientUserMessageId` is the only idempotency handle. */
export interface FollowUpTurnInput {
  readonly text: string
  readonly clientUserMessageId: string
}

/** Params of `thread-follower-start-turn`. */
export const startTurnParams = (conversationId: string, input: FollowUpTurnInput) => ({
  conversationId,
  turnStart: {
    request: {
      threadId: conversationId,
      clientUserMessageId: input.clientUserMessageId,
      input: [
        { type: "text" as const, text: input.text, text_elements: [] as ReadonlyArray<never> },
      ],
    },
    context: { inheritThreadSettings: true as const },
  },
})

/** Params of `thread-follower-interrupt-turn`: stop `expectedTurnId` only, as the user would. */
export const interruptTurnParams = (conversationId: string, expectedTurnId: string) => ({
  conversationId,
  mode: "user-stop" as const,
  expectedTurnId,
})

const CompactAck = Schema.Struct({ ok: Schema.Literal(true) })

const StartTurnAck = Schema.Struct({
  result: Schema.Struct({
    turn: Schema.Struct({
      id: Schema.String,
      status: Schema.Literals(["inProgress", "completed"]),
    }),
  }),
})

const InterruptAck = Schema.Struct({ interruptedTurnId: Schema.NullOr(Schema.String) })

/** The accepted start-turn acknowledgement. */
export interface StartedTurn {
  readonly turnId: string
  readonly status: "inProgress" | "completed"
}

/** Checks a compact acknowledgement; the failure names what was wrong. */
export const checkCompactAck = (result: unknown): Result.Result<{ readonly ok: true }, string> => {
  const decoded = Schema.decodeUnknownResult(CompactAck)(result)
  return decoded._tag === "Success"
    ? Result.succeed(decoded.success)
    : Result.fail("acknowledgement lacks ok: true")
}

/** Checks a start-turn acknowledgement; the failure names what was wrong. */
export const checkStartTurnAck = (result: unknown): Result.Result<StartedTurn, string> => {
  const decoded = Schema.decodeUnknownResult(StartTurnAck)(result)
  return decoded._tag === "Success"
    ? Result.succeed({
        turnId: decoded.success.result.turn.id,
        status: decoded.success.result.turn.status,
      })
    : Result.fail("acknowledgement lacks result.turn with an id and status inProgress or completed")
}

/** The accepted interrupt acknowledgement (`interruptedTurnId` null: no such turn was running). */
export interface InterruptedTurn {
  readonly interruptedTurnId: string | null
}

/** Checks an interrupt acknowledgement; the failure names what was wrong. */
export const checkInterruptAck = (result: unknown): Result.Result<InterruptedTurn, string> => {
  const decoded = Schema.decodeUnknownResult(InterruptAck)(result)
  return decoded._tag === "Success"
    ? Result.succeed({ interruptedTurnId: decoded.success.interruptedTurnId })
    : Result.fail("acknowledgement lacks interruptedTurnId (a turn id or null)")
}
