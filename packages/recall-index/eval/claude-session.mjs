// The eval corpora's Claude Code session writer: one transcript's JSONL lines, each with a fresh
// uuid chained to the previous line and a timestamp from `tick` (called once per line, after the
// uuid is drawn, so a corpus's random sequence is the one it always had).
export const claudeSessionWriter = ({ random, cwd, sessionId, tick }) => {
  let parent = null
  const lines = []
  const line = (type, message) => {
    const uuid = random.uuid()
    const at = tick()
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: false,
        userType: "external",
        cwd,
        sessionId,
        version: "2.1.90",
        gitBranch: "main",
        type,
        uuid,
        timestamp: new Date(at).toISOString(),
        message,
      }),
    )
    parent = uuid
  }
  return {
    lines,
    user: (text) => line("user", { role: "user", content: text }),
    assistant: (text) =>
      line("assistant", {
        id: `msg_${random.hex(20)}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        usage: { input_tokens: 10, output_tokens: 5 },
      }),
  }
}
