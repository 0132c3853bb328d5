/**
 * @baton/ipc-codex — Transports to live Codex threads (app-server stdio, daemon control socket, VS Code extension IPC) behind one interface.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
