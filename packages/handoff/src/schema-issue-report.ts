/**
 * Turns effect/Schema issues into HandoffInvalidError: one `{path, rule}` per problem, in the
 * words of this package. Guarantee: rules never quote input values (only their JSON type), and
 * paths pass through formatFieldPath (masked, truncated), so a secret in an unknown key or a
 * wrong-typed field never reaches an error.
 */
import * as SchemaIssue from "effect/SchemaIssue"
import type { SchemaAST, Schema } from "effect"
import { HandoffInvalidError } from "./errors.js"
import type { HandoffProblem } from "./errors.js"
import { formatFieldPath } from "./field-path.js"

/** At most this many problems are kept, so hostile input cannot build a huge error. */
const maxIssues = 20

const jsonType = (issue: SchemaIssue.Leaf): string => {
  if (!SchemaIssue.hasInput(issue)) return "nothing"
  const input = issue.input
  if (input === null) return "null"
  if (Array.isArray(input)) return "an array"
  if (typeof input === "object") return "an object"
  if (typeof input === "string") return "a string"
  if (typeof input === "number") return "a number"
  if (typeof input === "boolean") return "a boolean"
  return typeof input
}

const expectedByTag: Partial<Record<SchemaAST.AST["_tag"], string>> = {
  String: "a string",
  Boolean: "a boolean (true or false)",
  Arrays: "an array of strings",
  Objects: "a JSON object",
}

const expectedType = (ast: SchemaAST.AST): string =>
  ast._tag === "Literal"
    ? `the literal ${String(ast.literal)}`
    : (expectedByTag[ast._tag] ?? "a different type")

const leafRule = (issue: SchemaIssue.Leaf): string => {
  switch (issue._tag) {
    case "InvalidType":
      return `must be ${expectedType(issue.ast)} (found ${jsonType(issue)})`
    case "MissingKey":
      return "is required"
    case "UnexpectedKey":
      return "is not an allowed field"
    case "InvalidValue":
    case "Forbidden":
      return issue.annotations?.message ?? "is not allowed"
    case "OneOf":
      return "matches more than one allowed shape"
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook: leafRule })

const segmentKey = (segment: PropertyKey | { readonly key: PropertyKey }): PropertyKey =>
  typeof segment === "object" ? segment.key : segment

const invalid = (issues: ReadonlyArray<HandoffProblem>): HandoffInvalidError => {
  const first = issues[0] ?? { path: "", rule: "is invalid" }
  return new HandoffInvalidError({ path: first.path, rule: first.rule, issues })
}

/** A HandoffInvalidError listing the problems of a Schema decode failure. */
export const invalidFromSchemaError = (
  error: Schema.SchemaError,
  prefix: ReadonlyArray<PropertyKey>,
): HandoffInvalidError => {
  const { issues } = formatter(error.issue)
  const problems = issues.slice(0, maxIssues).map((issue) => ({
    path: formatFieldPath([...prefix, ...(issue.path ?? []).map(segmentKey)]),
    rule: issue.message,
  }))
  if (issues.length <= maxIssues) return invalid(problems)
  problems.push({ path: "", rule: `has ${issues.length - maxIssues} further problems` })
  const first = problems[0]!
  return new HandoffInvalidError({ ...first, issues: problems, total: issues.length })
}

/** A HandoffInvalidError for input that could not even be read (a throwing getter or proxy). */
export const invalidFromDefect = (
  _defect: unknown,
  prefix: ReadonlyArray<PropertyKey>,
): HandoffInvalidError =>
  invalid([{ path: formatFieldPath(prefix), rule: "could not be read as plain JSON data" }])

/** A HandoffInvalidError for one problem. */
export const invalidAt = (path: ReadonlyArray<PropertyKey>, rule: string): HandoffInvalidError =>
  invalid([{ path: formatFieldPath(path), rule }])
