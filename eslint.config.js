// ESLint flat config: typescript-eslint with type information, and per-layer import rules so
// the layers point one way (apps → domain packages → ipc-codex → effect).
import js from "@eslint/js"
import tseslint from "typescript-eslint"

const layer = (files, forbidden, why) => ({
  files,
  rules: {
    "no-restricted-imports": ["error", { patterns: [{ group: forbidden, message: why }] }],
  },
})

const effectBarrel = {
  name: "effect",
  message: 'Import the module instead: import * as Effect from "effect/Effect".',
  allowTypeImports: true,
}

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "**/generated/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
      "vitest.config.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/consistent-type-imports": [
        "error",
        { fixStyle: "separate-type-imports" },
      ],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/only-throw-error": "off",
    },
  },
  {
    files: ["**/*.test.ts", "**/tests/**/*.ts", "**/bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  layer(
    ["packages/{handoff,compaction,recall-index,wake,ipc-codex,durable-files}/src/**/*.ts"],
    [
      "@baton/cli",
      "@baton/cli/*",
      "@baton/mcp-server",
      "@baton/mcp-server/*",
      "@baton/testkit",
      "@baton/testkit/*",
    ],
    "Domain and transport packages never import the apps (cli, mcp-server) or the testkit.",
  ),
  layer(
    ["packages/ipc-codex/src/**/*.ts", "packages/handoff/src/**/*.ts"],
    [
      "@baton/compaction",
      "@baton/recall-index",
      "@baton/wake",
      "@baton/handoff*",
      "@baton/ipc-codex*",
    ].filter(Boolean),
    "ipc-codex and handoff sit below the domain packages and import neither them nor each other.",
  ),
  layer(
    ["packages/durable-files/src/**/*.ts"],
    ["@baton/*"],
    "durable-files is the bottom layer: plain Node file primitives, importing no Baton package.",
  ),
  layer(
    ["packages/*/src/**/*.ts"],
    ["@baton/*/src/*", "@baton/*/dist/*"],
    "Import another package through its public entry, never its internals.",
  ),
  {
    // Under plain Node ESM the `effect` barrel evaluates all ~140 of its modules: ~250 ms of every
    // CLI call and hook. Shipped code imports modules (`import * as Effect from "effect/Effect"`),
    // statically or dynamically.
    files: ["packages/*/src/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", { paths: [effectBarrel] }],
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportExpression[source.value='effect']",
          message: 'Import the module instead: await import("effect/Effect").',
        },
      ],
    },
  },
  {
    // Kysely is ~260 ES modules (~0.2 s): recall-index loads it with `import("kysely")` only where
    // it is used (the indexer's queries, migrations), so read calls never pay for it.
    files: ["packages/recall-index/src/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            effectBarrel,
            {
              name: "kysely",
              message: 'Load it where it is used: (await import("kysely")).sql, or db.kysely().',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
)
