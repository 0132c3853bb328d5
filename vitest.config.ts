import { defineConfig } from "vitest/config"

// Two projects: `unit` (fast, next to the code and in tests/ folders) and `e2e` (real Codex and
// Claude Code binaries against loopback mock model servers). `pnpm test` runs both.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          sequence: { groupOrder: 0 },
          include: [
            "packages/*/src/**/*.test.ts",
            "packages/*/tests/**/*.test.ts",
            "apps/*/tests/**/*.test.ts",
          ],
          exclude: ["**/*.e2e.test.ts", "**/node_modules/**", "**/dist/**"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "e2e",
          // Runs after the unit project, with its own worker limit.
          sequence: { groupOrder: 1 },
          include: ["packages/*/tests/**/*.e2e.test.ts", "apps/*/tests/**/*.e2e.test.ts"],
          exclude: ["**/node_modules/**", "**/dist/**"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Real agents are heavy; two at once is the most this 2-core machine takes well.
          maxWorkers: 2,
        },
      },
    ],
  },
})
