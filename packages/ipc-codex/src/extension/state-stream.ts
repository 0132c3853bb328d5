/**
 * The follow stream of one thread as a transition table: phase × change → phase + outcome.
 * Guarantees:
 * - a snapshot always replaces the held state (it is authoritative; revisions may restart
 *   after an owner change), but only if it passes the layout check, else the outcome is fatal;
 * - a patch batch is applied only when a state is held and `baseRevision` equals the held
 *   revision; anything else (no state, missing base, gap, out of order, patch that does not
 *   apply, patched state that fails the layout check) drops the state and asks for a
 *   resnapshot (re-follow) instead of guessing;
 * - while waiting for a snapshot, only the first stray patch batch asks for another re-follow;
 *   later ones are ignored until a snapshot arrives or the driver's snapshot timer re-follows;
 * - the held state is never mutated (see state-patch.ts).
 * Pure and never throws; the driver (extension-thread.ts) performs the re-follow.
 */
import { decodeConversationState } from "./conversation-state.js"
import type { ConversationView } from "./conversation-state.js"
import type { StreamChange } from "./envelope.js"
import type { StateLayoutError } from "./errors.js"
import { applyPatches } from "./state-patch.js"

/** Where the stream of one followed thread stands. */
export type StreamPhase =
  | { readonly _tag: "AwaitingSnapshot"; readonly strayPatchRefollowed: boolean }
  | {
      readonly _tag: "Live"
      readonly revision: number
      readonly state: unknown
      readonly view: ConversationView
    }

/** Why the state was dropped and a fresh snapshot requested. */
export type ResnapshotReason =
  | "patch-before-snapshot"
  | "missing-base-revision"
  | "revision-gap"
  | "patch-failed"
  | "patched-layout-invalid"

/** What one change did. */
export type StreamOutcome =
  | { readonly _tag: "Snapshot"; readonly revision: number }
  | { readonly _tag: "Patched"; readonly revision: number; readonly operations: number }
  | { readonly _tag: "Resnapshot"; readonly reason: ResnapshotReason; readonly detail: string }
  | { readonly _tag: "Ignored"; readonly detail: string }
  | { readonly _tag: "Fatal"; readonly error: StateLayoutError }

/** The phase right after a follow was sent. */
export const AWAITING_SNAPSHOT: StreamPhase = {
  _tag: "AwaitingSnapshot",
  strayPatchRefollowed: false,
}

const resnapshot = (
  reason: ResnapshotReason,
  detail: string,
): { readonly phase: StreamPhase; readonly outcome: StreamOutcome } => ({
  phase: { _tag: "AwaitingSnapshot", strayPatchRefollowed: true },
  outcome: { _tag: "Resnapshot", reason, detail },
})

/** The transition function of the follow stream. */
export const reduceStream = (
  phase: StreamPhase,
  change: StreamChange,
): { readonly phase: StreamPhase; readonly outcome: StreamOutcome } => {
  if (change.type === "snapshot") {
    const view = decodeConversationState(change.conversationState)
    if (view._tag === "Failure")
      return { phase: AWAITING_SNAPSHOT, outcome: { _tag: "Fatal", error: view.failure } }
    return {
      phase: {
        _tag: "Live",
        revision: change.revision,
        state: change.conversationState,
        view: view.success,
      },
      outcome: { _tag: "Snapshot", revision: change.revision },
    }
  }
  if (phase._tag === "AwaitingSnapshot") {
    return phase.strayPatchRefollowed
      ? {
          phase,
          outcome: {
            _tag: "Ignored",
            detail: `patches to revision ${change.revision} while awaiting a snapshot`,
          },
        }
      : resnapshot(
          "patch-before-snapshot",
          `patches to revision ${change.revision} arrived before any snapshot`,
        )
  }
  if (change.baseRevision === undefined)
    return resnapshot(
      "missing-base-revision",
      `patches to revision ${change.revision} carry no baseRevision`,
    )
  if (change.baseRevision !== phase.revision)
    return resnapshot(
      "revision-gap",
      `held revision ${phase.revision}, patches based on ${change.baseRevision} (to ${change.revision})`,
    )
  const applied = applyPatches(phase.state, change.patches)
  if (applied._tag === "Failure") return resnapshot("patch-failed", applied.failure.message)
  const view = decodeConversationState(applied.success)
  if (view._tag === "Failure") return resnapshot("patched-layout-invalid", view.failure.message)
  return {
    phase: { _tag: "Live", revision: change.revision, state: applied.success, view: view.success },
    outcome: { _tag: "Patched", revision: change.revision, operations: change.patches.length },
  }
}
