/**
 * Scripts the backend usage answer (`GET /backend-api/wham/usage`) that feeds the app-server's
 * `ordinaryUsageAllowed`. In openai/codex the backend client reads `rate_limit.allowed` from this
 * answer (backend-client `rate_limit_resets.rs`), and `account/rateLimits/read` passes it on only
 * when the answer's top-level `account_id` and `user_id` equal the signed-in account's
 * (`tokens.account_id` / the id token's `chatgpt_account_id`, and its `chatgpt_user_id`);
 * otherwise — or when they are missing — the read reports `null` (app-server
 * `account_processor.rs`). Observed on codex-cli 0.169.0: true, false and null all reproduce.
 */
import type { MockBackendAnswer } from "./mock-responses.js"

/** One usage window as the backend sends it (`reset_after_seconds` is required by 0.169). */
export interface UsageWindowAnswer {
  readonly usedPercent: number
  readonly windowSeconds: number
  /** Unix seconds. */
  readonly resetAt: number
}

/** Options of `usageAllowanceAnswer`. */
export interface UsageAllowanceOptions {
  /** Must match the simulated sign-in (`createCodexHome({chatgptAuth: {accountId}})`). */
  readonly accountId: string
  /** Must match the id token's `chatgpt_user_id` (`chatgptAuth.userId`). */
  readonly userId: string
  readonly planType?: string
  readonly primary?: UsageWindowAnswer | null
  readonly secondary?: UsageWindowAnswer | null
}

const window = (w: UsageWindowAnswer | null | undefined) =>
  w === null || w === undefined
    ? null
    : {
        used_percent: w.usedPercent,
        limit_window_seconds: w.windowSeconds,
        reset_after_seconds: Math.max(0, w.resetAt - Math.floor(Date.now() / 1000)),
        reset_at: w.resetAt,
      }

/**
 * A usage answer making `ordinaryUsageAllowed` read `allowed`: `true` / `false` validated for the
 * account, or `null` (the identity is left out, so Codex cannot validate it).
 */
export const usageAllowanceAnswer = (
  allowed: boolean | null,
  options: UsageAllowanceOptions,
): MockBackendAnswer => ({
  status: 200,
  body: {
    plan_type: options.planType ?? "plus",
    ...(allowed === null ? {} : { account_id: options.accountId, user_id: options.userId }),
    rate_limit: {
      allowed: allowed ?? true,
      limit_reached: allowed === false,
      primary_window: window(options.primary),
      secondary_window: window(options.secondary),
    },
    credits: { has_credits: false, unlimited: false, balance: "0" },
  },
})
