/**
 * What Baton does with a server→client request (approval, user input, elicitation).
 *
 * Baton never approves anything on a user's behalf. On a shared app-server (the daemon, the
 * extension) the request also reaches the user's own client, so Baton leaves it unanswered and
 * only records it as pending (the thread is then not idle). On a private stdio app-server nobody
 * else can answer, and an unanswered request would hang the turn forever, so Baton declines: the
 * narrowest "no" each request type has, or a JSON-RPC error where the type has no "no".
 */

/** `leave-pending`: record only (shared servers). `decline`: answer "no" (private stdio server). */
export type ServerRequestPolicy = "leave-pending" | "decline"

/** The answer Baton sends when declining. */
export type DeclineAnswer =
  | { readonly _tag: "Result"; readonly result: unknown }
  | { readonly _tag: "Error"; readonly code: number; readonly message: string }

/** JSON-RPC code used when a request type has no "decline" answer. */
export const DECLINED_CODE = -32000

const DECLINE_MESSAGE =
  "declined by Baton: no interactive user is attached to this private app-server"

/** The decline answer for one server→client request method. */
export const declineAnswer = (method: string): DeclineAnswer => {
  switch (method) {
    case "item/commandExecution/requestApproval":
    case "item/fileChange/requestApproval":
      return { _tag: "Result", result: { decision: "decline" } }
    case "mcpServer/elicitation/request":
      return { _tag: "Result", result: { action: "decline", content: null, _meta: null } }
    case "execCommandApproval":
    case "applyPatchApproval":
      return { _tag: "Result", result: { decision: { denied: { rejection: DECLINE_MESSAGE } } } }
    default:
      return { _tag: "Error", code: DECLINED_CODE, message: DECLINE_MESSAGE }
  }
}
