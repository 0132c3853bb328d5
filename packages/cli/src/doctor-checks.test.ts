import { describe, expect, it } from "vitest"
import { assessDoctorFacts, formatMode, redactEndpoint } from "./doctor-checks.js"
import type { DoctorCheck } from "./doctor-checks.js"
import type { DoctorFacts, WritableDirFacts } from "./doctor-facts.js"

const healthy: DoctorFacts = {
  nodeVersion: "20.20.2",
  batonOnPath: "/usr/local/bin/baton",
  claudeOnPath: "/usr/local/bin/claude",
  recallIndex: {
    _tag: "Readable",
    path: "/d/recall-index.db",
    bytes: 3 * 1024 * 1024,
    schemaVersion: 10,
    sessions: 1234,
  },
  dataDir: {
    path: "/d",
    source: "$BATON_DATA_DIR",
    _tag: "Present",
    mode: 0o700,
    writable: true,
    ownedByUser: true,
  },
  jobsDir: {
    path: "/j",
    source: "$BATON_JOBS_DIR",
    _tag: "Present",
    mode: 0o700,
    writable: true,
    ownedByUser: true,
  },
  codexHome: { path: "/c", source: "$CODEX_HOME", exists: true, isDirectory: true },
  claudeConfig: { path: "/cl", source: "$CLAUDE_CONFIG_DIR", exists: true, isDirectory: true },
  claudeProjects: {
    path: "/cl/projects",
    source: "$CLAUDE_CONFIG_DIR",
    exists: true,
    isDirectory: true,
  },
  claudeMcpNeedsAuth: { _tag: "Absent", path: "/cl/mcp-needs-auth-cache.json" },
  codex: {
    _tag: "Found",
    path: "/bin/codex",
    source: "path",
    version: { _tag: "Version", text: "codex-cli 0.169.0" },
  },
  vectorStore: { _tag: "Available", sqliteVersion: "3.53.2", vecVersion: "v0.1.9", fts5: true },
  embedder: {
    _tag: "Selected",
    choice: "auto",
    endpoint: undefined,
    model: undefined,
    voyageKeySet: false,
    staticTable: { _tag: "Loaded", fingerprint: "embedded/use-static@abc/512/sif0.0003" },
  },
}

const byId = (facts: Partial<DoctorFacts>): Record<string, DoctorCheck> =>
  Object.fromEntries(assessDoctorFacts({ ...healthy, ...facts }).map((c) => [c.id, c]))

const dir = (
  fields: Partial<WritableDirFacts> & Pick<WritableDirFacts, "_tag">,
): WritableDirFacts => ({ path: "/d", source: "$BATON_DATA_DIR", ...fields }) as WritableDirFacts

describe("assessDoctorFacts", () => {
  it("reports every check ok on a healthy machine, in a fixed order", () => {
    const checks = assessDoctorFacts(healthy)
    expect(checks.map((c) => c.id)).toEqual([
      "node",
      "baton-command",
      "data-dir",
      "recall-index",
      "jobs-dir",
      "codex-home",
      "claude-config",
      "claude-binary",
      "codex-binary",
      "vector-store",
      "embedder",
    ])
    expect(checks.every((c) => c.status === "ok" && c.hint === null)).toBe(true)
    expect(byId({})["codex-binary"]?.summary).toBe("codex-cli 0.169.0 (source: PATH)")
  })

  it("warns when baton or claude is not on PATH: the plugins start baton", () => {
    expect(byId({ batonOnPath: undefined })["baton-command"]).toMatchObject({
      status: "warn",
      summary: "baton is not on PATH",
      hint: expect.stringContaining("npm install -g ./packages/cli"),
    })
    expect(byId({ claudeOnPath: undefined })["claude-binary"]).toMatchObject({
      status: "warn",
      summary: "claude not found on PATH",
    })
  })

  it("reports the recall index: its size and sessions, none yet, or why it cannot be used", () => {
    expect(byId({})["recall-index"]).toMatchObject({
      status: "ok",
      summary: "/d/recall-index.db",
      detail: "1,234 sessions, 3.0 MiB, schema 10",
    })
    expect(
      byId({ recallIndex: { _tag: "Missing", path: "/d/recall-index.db" } })["recall-index"],
    ).toMatchObject({
      status: "ok",
      summary: "no index yet",
    })
    const damaged = "the recall index at /d/recall-index.db is damaged (file is not a database)"
    expect(
      byId({ recallIndex: { _tag: "Unusable", path: "/d/recall-index.db", message: damaged } })[
        "recall-index"
      ],
    ).toMatchObject({ status: "fail", detail: damaged })
    // A data directory that is not one fails on its own; the index is not checked twice.
    expect(byId({ dataDir: dir({ _tag: "NotADirectory" }) })["recall-index"]).toBeUndefined()
  })

  it("names a data directory under a symbolic link to nothing", () => {
    expect(
      byId({ dataDir: dir({ _tag: "DanglingLink", link: "/d", target: "/gone" }) })["data-dir"],
    ).toMatchObject({
      status: "fail",
      summary: "/d — under a symbolic link to nothing",
      detail: "/d points to /gone, which does not exist (from $BATON_DATA_DIR)",
    })
  })

  it("fails a relative BATON_DATA_DIR or BATON_JOBS_DIR, which every command refuses", () => {
    const relative = dir({ _tag: "Relative", path: "rel/dir", relative: true })
    expect(byId({ dataDir: relative })["data-dir"]).toMatchObject({
      status: "fail",
      summary: "rel/dir — a relative path",
      hint: "Set BATON_DATA_DIR to an absolute path",
    })
    expect(byId({ dataDir: relative })["recall-index"]).toBeUndefined()
    expect(byId({ jobsDir: { ...relative, source: "$BATON_JOBS_DIR" } })["jobs-dir"]).toMatchObject(
      { status: "fail", hint: "Set BATON_JOBS_DIR to an absolute path" },
    )
  })

  it("fails Node older than 20", () => {
    expect(byId({ nodeVersion: "18.19.0" })["node"]).toMatchObject({
      status: "fail",
      summary: "Node 18.19.0 is too old",
    })
  })

  it("grades directories: private ok, group-readable warn, unwritable fail, missing ok or fail", () => {
    const present = { _tag: "Present", mode: 0o755, writable: true, ownedByUser: true } as const
    expect(byId({ dataDir: dir(present) })["data-dir"]).toMatchObject({
      status: "warn",
      summary: "/d — not private (0755)",
      hint: "Run: chmod 700 /d",
    })
    expect(
      byId({ dataDir: dir({ ...present, mode: 0o700, writable: false }) })["data-dir"]?.status,
    ).toBe("fail")
    expect(
      byId({ dataDir: dir({ ...present, mode: 0o700, ownedByUser: false }) })["data-dir"]?.status,
    ).toBe("warn")
    expect(
      byId({ dataDir: dir({ _tag: "Missing", nearestExisting: "/", creatable: true }) })[
        "data-dir"
      ],
    ).toMatchObject({
      status: "ok",
      summary: "/d — not created yet",
      detail: "will be created 0700 on first use (from $BATON_DATA_DIR)",
    })
    expect(
      byId({ jobsDir: dir({ _tag: "Missing", nearestExisting: "/ro", creatable: false }) })[
        "jobs-dir"
      ],
    ).toMatchObject({
      status: "fail",
      detail: "nearest existing parent /ro is not writable (from $BATON_DATA_DIR)",
    })
    expect(byId({ dataDir: dir({ _tag: "NotADirectory" }) })["data-dir"]?.status).toBe("fail")
  })

  it("fails a data directory whose parent refused a real create, with the cause and the fix", () => {
    // Root on /sys or a read-only mount: access() allowed it, the test directory was refused.
    const checks = byId({
      dataDir: dir({
        _tag: "Missing",
        nearestExisting: "/sys",
        creatable: false,
        refusal: "EPERM",
      }),
    })
    expect(checks["data-dir"]).toMatchObject({
      status: "fail",
      summary: "/d — not created yet, and cannot be",
      detail:
        "nearest existing parent /sys refused a test directory (EPERM) (from $BATON_DATA_DIR); " +
        "index runs, the plugins' SessionStart hook included, fail until then",
      hint: "Set BATON_DATA_DIR to a directory you can write, or create it (mkdir -p -m 700 /d) or fix the permissions of /sys",
    })
    expect(
      byId({
        dataDir: dir({
          _tag: "Missing",
          nearestExisting: "/ro",
          creatable: false,
          refusal: "EROFS",
        }),
      })["data-dir"]?.detail,
    ).toContain("nearest existing parent /ro is on a read-only file system (EROFS)")
    const readOnly = byId({
      dataDir: dir({
        _tag: "Present",
        mode: 0o700,
        writable: false,
        refusal: "EROFS",
        ownedByUser: true,
      }),
      recallIndex: { _tag: "Missing", path: "/d/recall-index.db" },
    })
    expect(readOnly["data-dir"]).toMatchObject({
      status: "fail",
      summary: "/d — not writable",
      detail:
        "mode 0700, private, not writable: a read-only file system (EROFS) (from $BATON_DATA_DIR)",
      hint: "Set BATON_DATA_DIR to a directory on a writable disk, or remount it read-write",
    })
    // No "the hook builds it" line beside a directory no index run can write.
    expect(readOnly["recall-index"]).toBeUndefined()
  })

  it("warns when Claude Code marked Baton's MCP server failed, naming the file and the fix", () => {
    const path = "/cl/mcp-needs-auth-cache.json"
    expect(byId({})["claude-mcp"]).toBeUndefined()
    expect(
      byId({ claudeMcpNeedsAuth: { _tag: "Read", path, batonKeys: ["plugin:baton:baton"] } })[
        "claude-mcp"
      ],
    ).toEqual({
      id: "claude-mcp",
      status: "warn",
      summary: "Claude Code marked Baton's MCP server failed (plugin:baton:baton)",
      detail:
        "/cl/mcp-needs-auth-cache.json lists it: Claude Code does not start it again (a session " +
        "started when baton was not on PATH?), so sessions have the skills but no Baton tools",
      hint: "Run /mcp in Claude Code and reconnect plugin:baton:baton, or remove its entry from /cl/mcp-needs-auth-cache.json",
    })
    expect(
      byId({ claudeMcpNeedsAuth: { _tag: "Read", path, batonKeys: [] } })["claude-mcp"],
    ).toMatchObject({ status: "ok", summary: "Baton's MCP server is not marked failed" })
    const unreadable = byId({
      claudeMcpNeedsAuth: { _tag: "Unreadable", path, reason: "not valid JSON" },
    })["claude-mcp"]
    expect(unreadable).toMatchObject({
      status: "warn",
      summary: "/cl/mcp-needs-auth-cache.json — could not be read",
    })
    expect(unreadable?.detail).toContain("not valid JSON")
  })

  it("quotes paths with spaces in hints", () => {
    const facts = {
      path: "/my dir",
      source: "x",
      _tag: "Present",
      mode: 0o750,
      writable: true,
      ownedByUser: true,
    } as const
    expect(byId({ dataDir: facts })["data-dir"]?.hint).toBe("Run: chmod 700 '/my dir'")
  })

  it("warns about missing agent directories and an absent projects dir", () => {
    expect(
      byId({ codexHome: { ...healthy.codexHome, exists: false, isDirectory: false } })["codex-home"]
        ?.status,
    ).toBe("warn")
    expect(
      byId({ claudeProjects: { ...healthy.claudeProjects, exists: false, isDirectory: false } })[
        "claude-config"
      ],
    ).toMatchObject({ status: "warn", summary: "/cl — no projects/ directory" })
  })

  it("grades the Codex binary by where it came from and what --version said", () => {
    expect(
      byId({ codex: { _tag: "NotFound", searched: ["PATH: no executable codex"] } })[
        "codex-binary"
      ],
    ).toMatchObject({
      status: "warn",
      summary: "codex not found",
      detail: "BATON_CODEX_BINARY is unset; searched: PATH: no executable codex",
    })
    expect(
      byId({
        codex: {
          _tag: "Unusable",
          path: "/x",
          reason: "BATON_CODEX_BINARY=/x: not an executable file (no fallback while it is set)",
        },
      })["codex-binary"],
    ).toMatchObject({
      status: "fail",
      summary: "/x — cannot be used",
      detail: "BATON_CODEX_BINARY=/x: not an executable file (no fallback while it is set)",
    })
    const found = (source: "env" | "path" | "vscode-extension") =>
      byId({
        codex: {
          _tag: "Found",
          path: "/x",
          source,
          version: { _tag: "Version", text: "codex-cli 0.169.0" },
        },
      })["codex-binary"]?.summary
    expect(found("env")).toBe("codex-cli 0.169.0 (source: $BATON_CODEX_BINARY)")
    expect(found("vscode-extension")).toBe("codex-cli 0.169.0 (source: VS Code extension)")
    expect(
      byId({
        codex: {
          _tag: "Found",
          path: "/x",
          source: "path",
          version: { _tag: "TimedOut", afterMs: 5000 },
        },
      })["codex-binary"],
    ).toMatchObject({
      status: "warn",
      summary: "codex --version did not answer within 5000 ms",
      detail: "/x (source: PATH)",
    })
    expect(
      byId({
        codex: {
          _tag: "Found",
          path: "/x",
          source: "path",
          version: { _tag: "Failed", reason: "exited with code 3" },
        },
      })["codex-binary"],
    ).toMatchObject({ status: "warn", summary: "codex --version failed: exited with code 3" })
  })

  it("fails when the vector store or FTS5 is missing", () => {
    expect(
      byId({ vectorStore: { _tag: "Unavailable", stage: "load-extension", reason: "nope" } })[
        "vector-store"
      ],
    ).toMatchObject({
      status: "fail",
      summary: "vector store unavailable (load-extension)",
      detail: "nope",
    })
    expect(
      byId({
        vectorStore: { _tag: "Available", sqliteVersion: "3", vecVersion: "v0", fts5: false },
      })["vector-store"]?.status,
    ).toBe("fail")
  })

  it("is truthful about embedders and never echoes credentials", () => {
    const selected = (fields: Partial<Extract<DoctorFacts["embedder"], { _tag: "Selected" }>>) =>
      byId({ embedder: { ...(healthy.embedder as object), ...fields } as DoctorFacts["embedder"] })[
        "embedder"
      ]
    expect(byId({})["embedder"]).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/^embedded, offline: auto \(USE-lite/) as unknown,
      detail: expect.stringContaining("nothing leaves this machine") as unknown,
    })
    expect(selected({ choice: "use-static", voyageKeySet: true })).toMatchObject({
      status: "ok",
      summary: "embedded, offline: the static word table",
      detail: expect.stringContaining("VOYAGE_API_KEY is set but unused") as unknown,
    })
    expect(
      selected({ choice: "use-lite", staticTable: { _tag: "Failed", reason: "no such file" } }),
    ).toMatchObject({ status: "fail", detail: "no such file" })
    expect(selected({ choice: "none", staticTable: undefined })).toMatchObject({
      status: "ok",
      summary: "embeddings off (BATON_EMBEDDER=none): recall searches words only",
    })
    const remote = selected({
      choice: "openai",
      endpoint: "https://user:pw@host:8080/v1?key=abc",
      model: "m",
      staticTable: undefined,
    })
    expect(remote).toMatchObject({
      status: "ok",
      summary: "OpenAI-compatible endpoint at https://host:8080/v1 (model m)",
      detail: expect.stringContaining("sent to the provider") as unknown,
    })
    expect(JSON.stringify(remote)).not.toMatch(/pw|abc/)
    expect(
      selected({ choice: "openai", endpoint: "http://127.0.0.1:9/v1", model: "m" })?.detail,
    ).toBe("the endpoint is on this machine")
    expect(selected({ choice: "voyage", model: "voyage-4-large" })?.summary).toBe(
      "Voyage voyage-4-large",
    )
    expect(selected({ choice: "openai", endpoint: "ftp://x/v1", model: "m" })).toMatchObject({
      status: "fail",
      summary: "BATON_EMBEDDINGS_URL is not an http(s) URL",
    })
    expect(
      byId({
        embedder: {
          _tag: "Invalid",
          variable: "VOYAGE_API_KEY",
          message: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
        },
      })["embedder"],
    ).toMatchObject({
      status: "fail",
      summary: "BATON_EMBEDDER=voyage needs a Voyage API key: set VOYAGE_API_KEY",
      hint: "Fix VOYAGE_API_KEY, or unset BATON_EMBEDDER for the offline embedded default",
    })
  })
})

describe("formatMode and redactEndpoint", () => {
  it("formats permission bits as four octal digits", () => {
    expect(formatMode(0o700)).toBe("0700")
    expect(formatMode(0o40755)).toBe("0755")
    expect(formatMode(0o5)).toBe("0005")
  })

  it("keeps only scheme, host and path of http(s) URLs", () => {
    expect(redactEndpoint("http://127.0.0.1:9/v1#x")).toBe("http://127.0.0.1:9/v1")
    expect(redactEndpoint("file:///etc/passwd")).toBeUndefined()
  })
})
