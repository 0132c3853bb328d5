// Codex 0.169 `exec -i image.png`: the prompt's response_item copy wraps the (dropped) input_image
// in `<image name=[Image #1] path="…">` / `</image>` input_text items; the item_completed copy has
// a local_image and the words only. Record shapes copied from a real 0.169 rollout.
import { describe, expect, it } from "vitest"
import { parseTranscriptBytes } from "./transcript-parser.js"
import type { Turn } from "./transcript-model.js"

const textOf = (t: Turn): string => t.surface.map((x) => x.text).join("\n\n")

const encoder = new TextEncoder()
const ID = "01a23e33-05a6-7350-8eab-c3147bee406a"
const TURN = "01a23e33-05c0-7c82-ba42-0ab1f8bcf62b"
const file = {
  source: "codex" as const,
  path: `/c/sessions/2026/12/03/rollout-2026-12-03T23-17-40-${ID}.jsonl`,
}
const at = (ms: number) => new Date(Date.UTC(2026, 11, 3, 23, 17, 40) + ms).toISOString()
const PROMPT = "describe this octopus image and run the echo"
const PNG = `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAASwAAAEsCAIAAAD2HxkiAAQgN0lEQVR4nAD${"x9Kq".repeat(40)}`

const rollout = (imageItems: ReadonlyArray<unknown>, localImages: ReadonlyArray<unknown>) =>
  [
    {
      timestamp: at(0),
      type: "session_meta",
      payload: {
        session_id: ID,
        id: ID,
        timestamp: at(0),
        cwd: "/w/octo",
        originator: "codex_exec",
        cli_version: "0.169.0",
        source: "exec",
      },
    },
    { timestamp: at(10), type: "event_msg", payload: { type: "task_started", turn_id: TURN } },
    {
      timestamp: at(20),
      type: "response_item",
      payload: {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: "<environment_context>\n  <cwd>/w/octo</cwd>\n</environment_context>",
          },
        ],
      },
    },
    {
      timestamp: at(30),
      type: "response_item",
      payload: {
        type: "message",
        id: "msg_01a23e33-060b-7ad2-8b6c-1b8eb4a3395a",
        role: "user",
        content: [...imageItems, { type: "input_text", text: PROMPT }],
      },
    },
    {
      timestamp: at(31),
      type: "event_msg",
      payload: {
        type: "item_completed",
        thread_id: ID,
        turn_id: TURN,
        item: {
          type: "UserMessage",
          id: "01a23e33-060b-7ad2-8b6c-1b9b091cd1b2",
          content: [...localImages, { type: "text", text: PROMPT, text_elements: [] }],
        },
      },
    },
    {
      timestamp: at(40),
      type: "event_msg",
      payload: {
        type: "item_completed",
        thread_id: ID,
        turn_id: TURN,
        item: {
          type: "AgentMessage",
          id: "msg_mock_3",
          content: [{ type: "Text", text: "Saw it." }],
        },
      },
    },
    {
      timestamp: at(41),
      type: "response_item",
      payload: {
        type: "message",
        id: "msg_mock_3",
        role: "assistant",
        content: [{ type: "output_text", text: "Saw it.", annotations: [] }],
      },
    },
  ]
    .map((l) => JSON.stringify(l))
    .join("\n") + "\n"

const withImage = (path: string, n: number) => [
  { type: "input_text", text: `<image name=[Image #${n}] path="${path}">` },
  { type: "input_image", image_url: PNG, detail: "high" },
  { type: "input_text", text: "</image>" },
]

const userTurns = (text: string) =>
  parseTranscriptBytes(file, encoder.encode(text)).turns.filter((t) => t.role === "user")

describe("a Codex prompt with an attached image", () => {
  it("is one user turn holding the words, without the image wrapper or its path", () => {
    const r = parseTranscriptBytes(
      file,
      encoder.encode(
        rollout(withImage("/tmp/sweepC/real/noise.png", 1), [
          { type: "local_image", path: "/tmp/sweepC/real/noise.png" },
        ]),
      ),
    )
    const users = r.turns.filter((t) => t.role === "user")
    expect(users.map((t) => textOf(t))).toEqual([PROMPT])
    expect(r.sessions[0]?.firstPrompt).toBe(PROMPT)
    expect(r.stats.duplicateSurfaceDropped).toBeGreaterThan(0)
    // The data URL is never stored, in any record.
    const records = r.turns.flatMap((t) => t.records).map((x) => x.text)
    expect(records.some((x) => x.includes("iVBORw0KGgo"))).toBe(false)
  })

  it("handles two images the same way", () => {
    const turns = userTurns(
      rollout(
        [...withImage("/a/one.png", 1), ...withImage("/a/two.png", 2)],
        [
          { type: "local_image", path: "/a/one.png" },
          { type: "local_image", path: "/a/two.png" },
        ],
      ),
    )
    expect(turns.map((t) => textOf(t))).toEqual([PROMPT])
  })

  it("keeps a prompt that is the same without an image as it was", () => {
    expect(userTurns(rollout([], [])).map((t) => textOf(t))).toEqual([PROMPT])
  })

  it("keeps a user's own text item that starts with an image tag", () => {
    const text = "<image> is the tag I mean >"
    const turns = userTurns(rollout([{ type: "input_text", text }], []))
    expect(turns.some((t) => textOf(t).includes(text))).toBe(true)
  })
})
