/**
 * Secret scanner: finds likely credentials in free text and masks them. Pure and total: never
 * throws, never does IO, and runs in linear time on adversarial input: token patterns are
 * anchored by a lookbehind so no run of token characters is rescanned from each of its
 * positions, PEM blocks are paired header-to-footer by a single forward walk, and a key's tail
 * (base64 lines above a footer, no header) is found by walking back over each line once.
 *
 * Detectors run in priority order (specific shapes before generic ones); a later match that
 * overlaps an accepted one is dropped, so the result is sorted and non-overlapping. Each detector
 * is gated by a cheap necessary condition (a literal or short pattern every match contains), so
 * ordinary prose is rejected in one pass per gate instead of a full pattern scan.
 * False positives are kept low on purpose: prose ("the password is in 1Password"), empty
 * assignments and placeholders (`<redacted>`, `***`, `$PASSWORD`, `${...}`, paths, identifiers
 * without digits) are not reported.
 */

/** The kinds of secret the scanner recognises. */
export type SecretKind =
  | "private-key"
  | "anthropic-api-key"
  | "openai-api-key"
  | "github-token"
  | "aws-access-key-id"
  | "slack-token"
  | "google-api-key"
  | "stripe-secret-key"
  | "npm-token"
  | "huggingface-token"
  | "gitlab-token"
  | "sendgrid-api-key"
  | "azure-storage-key"
  | "webhook-url"
  | "basic-auth"
  | "jwt"
  | "bearer-token"
  | "credential-assignment"
  | "url-password"

/** A likely secret at UTF-16 offsets `[start, end)` of the scanned text. */
export interface SecretMatch {
  readonly kind: SecretKind
  readonly start: number
  readonly end: number
}

type Span = readonly [start: number, end: number]

interface Detector {
  readonly kind: SecretKind
  /** A necessary condition: `find` can only report a span when this holds. */
  readonly mayMatch: (text: string) => boolean
  readonly find: (text: string) => Iterable<Span>
}

const containing =
  (literal: string) =>
  (text: string): boolean =>
    text.includes(literal)
const matching =
  (pattern: RegExp) =>
  (text: string): boolean =>
    pattern.test(text)

/** The span of a match: its first capture group that matched, else the whole match. */
const spanOf = (match: RegExpExecArray): Span | undefined => {
  const indices = match.indices
  if (indices === undefined) return undefined
  for (let group = 1; group < indices.length; group++) {
    const span = indices[group]
    if (span !== undefined) return span
  }
  return indices[0]
}

/** A detector from a global regexp with indices (`dg`) and an optional check of the span's text. */
const byPattern =
  (pattern: RegExp, accept: (secret: string) => boolean = () => true) =>
  (text: string): Array<Span> => {
    // exec over the shared pattern (matchAll would clone and recompile it on every call); no
    // pattern can match the empty string, so the loop always advances.
    const spans: Array<Span> = []
    pattern.lastIndex = 0
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const span = spanOf(match)
      if (span !== undefined && accept(text.slice(span[0], span[1]))) spans.push(span)
    }
    return spans
  }

const hasLetterAndDigit = (s: string): boolean => /[A-Za-z]/.test(s) && /[0-9]/.test(s)

const pemHeader = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g
const pemFooter = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g
const pemBodyRun = /\s*[A-Za-z0-9+/=]{32,}(?:\s*[A-Za-z0-9+/=]{8,})*/y
const isBase64Char = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) ||
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a) ||
  code === 0x2b ||
  code === 0x2f ||
  code === 0x3d
/** Longest PEM block paired with a footer (a 16384-bit RSA key is ~12.7 k characters). */
const maxPemBody = 16_384

/**
 * PEM private keys: a header paired with the next footer when a real body (≥ 32 base64
 * characters) sits between them, or a header followed directly by a base64 body (truncated
 * key). A header alone or a template (`...` as body) is not reported.
 */
const findPrivateKeys = (text: string): Array<Span> => {
  const headers = [...text.matchAll(pemHeader)]
  if (headers.length === 0) return []
  const footers = [...text.matchAll(pemFooter)]
  const base64Before = new Int32Array(text.length + 1)
  for (let i = 0; i < text.length; i++) {
    base64Before[i + 1] = base64Before[i]! + (isBase64Char(text.charCodeAt(i)) ? 1 : 0)
  }
  const spans: Array<Span> = []
  let next = 0
  for (const header of headers) {
    const bodyStart = header.index + header[0].length
    while (next < footers.length && footers[next]!.index < bodyStart) next++
    const footer = footers[next]
    if (
      footer !== undefined &&
      footer.index - bodyStart <= maxPemBody &&
      (base64Before[footer.index]! - base64Before[bodyStart]! >= 32 ||
        isShortPemBody(text.slice(bodyStart, footer.index)))
    ) {
      spans.push([header.index, footer.index + footer[0].length])
      continue
    }
    pemBodyRun.lastIndex = bodyStart
    const body = pemBodyRun.exec(text)
    if (body !== null) spans.push([header.index, bodyStart + body[0].length])
  }
  return spans
}

/** A line of a PEM body: base64 only (padding at the end), or an armor checksum (`=AbCd`). */
const pemBodyLine = /^(?:[A-Za-z0-9+/]+={0,2}|=[A-Za-z0-9+/]{4})$/

/**
 * A short body between a header and its footer (a truncated or test key): at least 12 base64
 * characters, every line base64 only (line breaks may be JSON-escaped `\n`), and not one repeated
 * character. A template (`...`, `<key>`, `YOUR KEY HERE`) has other characters and is not one.
 */
const isShortPemBody = (body: string): boolean => {
  const lines = body
    .replace(/\\+[rn]/g, " ")
    .split(/\s+/)
    .filter((line) => line !== "")
  if (lines.length === 0 || !lines.every((line) => pemBodyLine.test(line))) return false
  const joined = lines.join("")
  return joined.length >= 12 && !/^(.)\1*$/.test(joined.replace(/=+$/, ""))
}

/**
 * The line ending just before `end` (exclusive) and its start, looking back no further than
 * `floor` (the end of the previous footer): undefined when that line reaches back to `floor`
 * without a line break, i.e. shares its line with the previous footer.
 */
const lineBefore = (
  text: string,
  end: number,
  floor: number,
): { readonly start: number; readonly line: string } | undefined => {
  let start = end
  while (start > floor && text.charCodeAt(start - 1) !== 0x0a) start--
  if (start === floor && floor > 0 && text.charCodeAt(start - 1) !== 0x0a) return undefined
  return { start, line: text.slice(start, end) }
}

/**
 * The tail of a PEM private key without its header (`tail -4 key.pem`): the base64 lines directly
 * above a footer (≥ 32 base64 characters in all), through the footer. A footer with prose or
 * nothing above it is not reported. Each walk looks back no further than the previous footer, so
 * the text is walked over once in all.
 */
const findPrivateKeyTails = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  let floor = 0
  pemFooter.lastIndex = 0
  for (let footer = pemFooter.exec(text); footer !== null; footer = pemFooter.exec(text)) {
    const footerEnd = footer.index + footer[0].length
    // What precedes the footer on its own line: nothing, or (newlines lost) the end of the body
    // as the line's last word.
    const own = lineBefore(text, footer.index, floor)
    let first = -1
    let base64 = 0
    if (own !== undefined) {
      let cut = own.line.length
      while (cut > 0 && !/\s/.test(own.line[cut - 1]!)) cut--
      const word = own.line.slice(cut)
      const lead = own.line.slice(0, cut)
      if (word !== "" && pemBodyLine.test(word)) {
        first = footer.index - word.length
        base64 = word.length
      }
      const whole = lead.trim() === "" && (word === "" || first >= 0)
      for (let end = own.start - 1; whole && end > floor;) {
        const above = lineBefore(text, end, floor)
        const body = above?.line.trim() ?? ""
        if (above === undefined || body === "" || !pemBodyLine.test(body)) break
        first = above.start + above.line.indexOf(body)
        base64 += body.length
        end = above.start - 1
      }
    }
    if (first >= 0 && base64 >= 32) spans.push([first, footerEnd])
    floor = footerEnd
  }
  return spans
}

/**
 * The keywords of a credential assignment (`password=`, `API_KEY:`, `SMTP_PASS=`): `pass` and
 * `pwd` only as a whole word or after `_` / `-` (not `bypass`, `OLDPWD`).
 */
const credentialKeyword =
  "(?:password|passwd|passphrase|secret|secret[_-]?key|api[_-]?key|access[_-]?key|private[_-]?key|token|(?<![A-Za-z0-9])pass|(?<![A-Za-z0-9])pwd)"
/**
 * What closes a keyword before its `:` / `=`: a quote (`"password": …`), escaped once or more when
 * the text is JSON (`\"password\": …` inside a rendered tool call or a JSON string in JSON).
 */
const keywordQuote = `(?:\\\\*["'])?`

/**
 * A value is a credential only when it is long enough, is not a placeholder, reference or path,
 * and has the texture of a secret (a digit or a symbol); `password: string` stays quiet.
 */
const isCredentialValue = (value: string): boolean => {
  if (value.length < 6) return false
  if (/^[$%<[({*#]/.test(value) || value.startsWith("{{")) return false
  if (/^(?:\.{0,2}\/|~\/|[A-Za-z]:\\|file:)/.test(value)) return false
  if (/^(.)\1*$/.test(value) || /^[0-9.,:_-]+$/.test(value)) return false
  if (/process\.env|os\.environ|getenv|\benv\b|secrets\./i.test(value)) return false
  if (/^(?:your|my|the|some|dummy|fake|test|example)[-_]/i.test(value)) return false
  return /[0-9!@#$%^&*+=?~|]/.test(value)
}

/** Whether `text` has an upper-case and a lower-case letter. */
const hasMixedCase = (text: string): boolean => /[A-Z]/.test(text) && /[a-z]/.test(text)

/**
 * Whether `encoded` is the base64 of `user:password` (printable ASCII with a colon and a
 * non-empty password), as an `Authorization: Basic` header carries: "Basic usage" is not.
 */
const isBasicCredentials = (encoded: string): boolean => {
  let decoded: string
  try {
    decoded = atob(encoded)
  } catch {
    return false
  }
  return /^[\x20-\x7e]*:[\x20-\x7e]+$/.test(decoded)
}

/**
 * A weaker value after a strong keyword in an environment-style assignment (`SESSION_SECRET=`,
 * `DB_PASSWORD=`, `SMTP_PASS=`, upper case, no spaces): letters joined by `-` or `_`, which
 * {@link isCredentialValue} leaves alone for want of a digit or symbol
 * (`another-session-secret-value`). Placeholders (`your-secret-here`, `changeme-…`) are not.
 */
const isWordyEnvSecret = (value: string): boolean =>
  /[-_]/.test(value) &&
  !/^(?:your|my|the|some|dummy|fake|test|example|sample|placeholder|replace|change|changeme|insert|enter|xxx)[-_]/i.test(
    value,
  ) &&
  !/[-_](?:here|placeholder)$/i.test(value)

/**
 * A value a command takes as its password (`mysql -proot`): the flag says it is one, so only
 * references and placeholders (`$MYSQL_PWD`, `<password>`, `***`, `password`) are left alone.
 */
const isCommandPassword = (value: string): boolean =>
  value.length >= 3 &&
  !/^[$%<[({*#]/.test(value) &&
  !/^(.)\1*$/.test(value) &&
  !/^(?:pass(?:word|wd)?|pwd|secret)$/i.test(value) &&
  !/^(?:your|my|the|some|dummy|fake|test|example)[-_]/i.test(value)

/**
 * A MySQL or MariaDB client (`mysql`, `mysqldump`, `mariadb-dump`, …) and, within 300 characters of
 * its own command (no `|`, `;`, `&` or line break between), `-p<password>` (attached: `-p pw`
 * prompts and `pw` is the database) or `--password=<password>`. The window keeps each start's
 * scan bounded; `-P` (the port) and other commands' `-p` (`ssh -p 2222`) are not matched.
 */
const mysqlPassword =
  /(?<![\w.-])(?:mysql(?:dump|admin|import|check|show|slap|binlog|pump)?|mariadb(?:-?(?:dump|admin|import|check|show|slap|binlog))?)(?:\.exe)?[ \t](?:[^\r\n|;&]{0,300}?[ \t])?(?:-p|--password=)(?:'([^'\r\n]+)'|"([^"\r\n]+)"|([^\s'"`|;&]+))/dg

/**
 * `sshpass -p <password>` (also `-p<password>`): only `-p` among sshpass's own options, which come
 * before the command it runs — `sshpass -f pw.txt ssh -p 2222 host` is a port, not a password.
 */
const sshpassPassword =
  /(?<![\w.-])sshpass(?:[ \t]+-[fdP][ \t]*[^\s|;&]+|[ \t]+-[evhV])*[ \t]+-p[ \t]*(?:'([^'\r\n]+)'|"([^"\r\n]+)"|([^\s'"`|;&]+))/dg

/**
 * `redis-cli … -a <password>` or `--pass <password>` within 300 characters of its own command (no
 * `|`, `;`, `&` or line break between); `-p` is its port.
 */
const redisPassword =
  /(?<![\w.-])redis-cli(?:\.exe)?[ \t](?:[^\r\n|;&]{0,300}?[ \t])?(?:-a|--pass)[ \t]+(?:'([^'\r\n]+)'|"([^"\r\n]+)"|([^\s'"`|;&-][^\s'"`|;&]*))/dg

/** A `Cookie:` or `Set-Cookie:` header (also as a JSON or dict key) and its value (group 1). */
const cookieHeader =
  /(?<![A-Za-z0-9_-])(?:set-)?cookie(?:\\*["'])?[ \t]*:[ \t]*(?:\\*["'])?([^\r\n"'`\\]+)/dgi
/** A cookie name that says its value is a credential. */
const credentialCookieName = /sess|sid|token|auth|jwt|csrf|xsrf|secret/i
/** `Set-Cookie` attributes: their values are never credentials. */
const cookieAttribute =
  /^(?:path|domain|expires|max-age|samesite|secure|httponly|priority|partitioned|version|comment)$/i

/** One `name=value` of a cookie header (group 1: the name, group 2: the value, unquoted). */
const cookiePair = /^[ \t]*([\w.$-]+)[ \t]*=[ \t]*"?([^\s",;]*)/

/** Whether a cookie's value is a credential, by its name or its shape. */
const isCookieCredential = (name: string, value: string): boolean =>
  !cookieAttribute.test(name) &&
  ((credentialCookieName.test(name) && value.length >= 6 && isCommandPassword(value)) ||
    (value.length >= 20 && /^[A-Za-z0-9%._~+/=-]+$/.test(value) && hasLetterAndDigit(value)))

/**
 * The values of credential cookies in `Cookie:` / `Set-Cookie:` headers: a value is masked when
 * its name looks like a session or token (`session`, `sid`, `XSRF-TOKEN`, `auth_jwt`) or when it
 * is a long token (≥ 20 token characters with a letter and a digit). Names stay visible;
 * `theme=dark` and `Set-Cookie` attributes (`Path=/`, `Expires=…`) are not reported.
 */
const findCookieValues = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  cookieHeader.lastIndex = 0
  for (let header = cookieHeader.exec(text); header !== null; header = cookieHeader.exec(text)) {
    const span = spanOf(header)
    if (span === undefined) continue
    for (let at = span[0]; at < span[1];) {
      let next = text.indexOf(";", at)
      if (next < 0 || next > span[1]) next = span[1]
      const pair = cookiePair.exec(text.slice(at, next))
      const name = pair?.[1] ?? ""
      const value = pair?.[2] ?? ""
      if (pair !== null && isCookieCredential(name, value)) {
        const start = at + pair[0].length - value.length
        spans.push([start, start + value.length])
      }
      at = next + 1
    }
  }
  return spans
}

const detectors: ReadonlyArray<Detector> = [
  { kind: "private-key", mayMatch: containing("-----BEGIN "), find: findPrivateKeys },
  { kind: "private-key", mayMatch: containing("-----END "), find: findPrivateKeyTails },
  {
    kind: "anthropic-api-key",
    mayMatch: containing("sk-ant-"),
    find: byPattern(/(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/dg),
  },
  {
    kind: "openai-api-key",
    mayMatch: containing("sk-"),
    find: byPattern(/(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,}/dg, (secret) =>
      hasLetterAndDigit(secret.slice(3)),
    ),
  },
  {
    kind: "github-token",
    mayMatch: matching(/gh[pousr]_|github_pat_/),
    find: byPattern(
      /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/dg,
    ),
  },
  {
    kind: "aws-access-key-id",
    mayMatch: matching(/AKIA|ASIA/),
    find: byPattern(/(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg),
  },
  {
    kind: "slack-token",
    mayMatch: matching(/xox[abprs]-/),
    find: byPattern(/(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}/dg),
  },
  {
    kind: "google-api-key",
    mayMatch: containing("AIza"),
    find: byPattern(/(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35,}/dg),
  },
  {
    kind: "stripe-secret-key",
    mayMatch: containing("k_live_"),
    find: byPattern(/(?<![A-Za-z0-9_])[sr]k_live_[0-9A-Za-z]{16,}/dg),
  },
  {
    kind: "npm-token",
    mayMatch: containing("npm_"),
    find: byPattern(/(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg, (secret) =>
      hasLetterAndDigit(secret.slice(4)),
    ),
  },
  {
    kind: "huggingface-token",
    mayMatch: containing("hf_"),
    find: byPattern(/(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])/dg, (secret) =>
      hasMixedCase(secret.slice(3)),
    ),
  },
  {
    kind: "gitlab-token",
    mayMatch: containing("glpat-"),
    find: byPattern(/(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/dg),
  },
  {
    kind: "sendgrid-api-key",
    mayMatch: containing("SG."),
    find: byPattern(
      /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])/dg,
      hasLetterAndDigit,
    ),
  },
  {
    // A Slack or Discord incoming webhook: the URL is the credential; the host stays searchable.
    kind: "webhook-url",
    mayMatch: matching(/hooks\.slack\.com\/|discord(?:app)?\.com\/api\/webhooks\//),
    find: byPattern(
      /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/-]{16,})|discord(?:app)?\.com\/api\/webhooks\/([0-9]{5,}\/[A-Za-z0-9_-]{20,})/dg,
    ),
  },
  {
    // An Azure storage or Service Bus connection string's key (`AccountKey=…==;`).
    kind: "azure-storage-key",
    mayMatch: (text) => text.includes("AccountKey") || text.includes("SharedAccessKey"),
    find: byPattern(
      /(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*([A-Za-z0-9+/]{20,}={0,2})/dg,
      hasLetterAndDigit,
    ),
  },
  {
    kind: "jwt",
    mayMatch: containing("eyJ"),
    find: byPattern(
      /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/dg,
    ),
  },
  {
    kind: "bearer-token",
    mayMatch: matching(/bearer[ \t]/i),
    find: byPattern(
      /(?<![A-Za-z0-9_-])bearer[ \t]+([A-Za-z0-9._~+/-]{20,}=*)/dgi,
      hasLetterAndDigit,
    ),
  },
  {
    kind: "basic-auth",
    mayMatch: matching(/basic[ \t]/i),
    find: byPattern(
      /(?<![A-Za-z0-9_-])basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/dgi,
      isBasicCredentials,
    ),
  },
  {
    // A Twilio API key (`SK` + 32 hex); an account SID (`AC` + 32 hex) alone is an id, not a secret.
    kind: "credential-assignment",
    mayMatch: containing("SK"),
    find: byPattern(/(?<![A-Za-z0-9_])SK[0-9a-f]{32}(?![A-Za-z0-9_])/dg, (secret) =>
      hasLetterAndDigit(secret.slice(2)),
    ),
  },
  {
    // The secret after a Twilio account SID or API key in `user:password` form (`curl -u AC…:…`).
    kind: "credential-assignment",
    mayMatch: (text) => text.includes("AC") || text.includes("SK"),
    find: byPattern(
      /(?<![A-Za-z0-9_])(?:AC|SK)[0-9a-f]{32}:([A-Za-z0-9]{32})(?![A-Za-z0-9_])/dg,
      hasLetterAndDigit,
    ),
  },
  {
    // A Google service-account key's id (`"private_key_id": "<40 hex>"`, JSON-escaped or not).
    kind: "credential-assignment",
    mayMatch: containing("private_key_id"),
    find: byPattern(
      /(?<![A-Za-z0-9_])private_key_id(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?([0-9a-f]{40})(?![0-9A-Za-z])/dg,
    ),
  },
  {
    kind: "credential-assignment",
    mayMatch: matching(/mysql|mariadb/),
    find: byPattern(mysqlPassword, isCommandPassword),
  },
  {
    kind: "credential-assignment",
    mayMatch: containing("sshpass"),
    find: byPattern(sshpassPassword, isCommandPassword),
  },
  {
    kind: "credential-assignment",
    mayMatch: containing("redis-cli"),
    find: byPattern(redisPassword, isCommandPassword),
  },
  {
    kind: "credential-assignment",
    mayMatch: matching(/[Cc]ookie|COOKIE/),
    find: findCookieValues,
  },
  {
    // A Docker registry login (`"auth": "<base64 of user:password>"` in config.json or
    // DOCKER_AUTH_CONFIG): only when it decodes to `user:password`, like `Basic`.
    kind: "basic-auth",
    mayMatch: matching(/auth\\*["']?[ \t]*:/),
    find: byPattern(
      /(?<![A-Za-z0-9_-])auth(?:\\*["'])?[ \t]*:[ \t]*(?:\\*["'])?([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/dg,
      isBasicCredentials,
    ),
  },
  {
    // The value is quoted, quoted with escaped quotes (the text is JSON: `\"…\"`, `\\\"…\\\"`),
    // or bare. A quoted value runs to its closing quote past escaped ones (`"ab\"cd"`, and once
    // JSON-escaped `\"ab\\\"cd\"`), so no tail of it is left visible.
    kind: "credential-assignment",
    mayMatch: matching(new RegExp(`${credentialKeyword}${keywordQuote}[ \t]*[:=]`, "i")),
    find: byPattern(
      new RegExp(
        `(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*?${credentialKeyword}${keywordQuote}[ \t]*(?::|=(?!=))[ \t]*(?:"((?:[^"\\\\\r\n]|\\\\[^\r\n])*)"|'((?:[^'\\\\\r\n]|\\\\[^\r\n])*)'|\\\\"((?:[^"\\\\\r\n]|\\\\[^"\\\\\r\n]|\\\\\\\\(?:\\\\["\\\\]|[^"\\\\\r\n]))*)\\\\"|\\\\+"([^"\\\\\r\n]*)\\\\+"|([^\\s"'\`,;&)\\]}]+))`,
        "dgi",
      ),
      isCredentialValue,
    ),
  },
  {
    kind: "credential-assignment",
    mayMatch: matching(/(?:SECRET|PASSWORD|PASSWD|PASS|PWD)=/),
    find: byPattern(
      /(?<![A-Za-z0-9_])[A-Z0-9_]*?(?:SECRET|PASSWORD|PASSWD|(?<![A-Z0-9])PASS|(?<![A-Z0-9])PWD)=(?:\\*["'])?([A-Za-z][A-Za-z_-]{11,})(?![A-Za-z0-9_.-])/dg,
      isWordyEnvSecret,
    ),
  },
  {
    // The password of a URL's user info (`postgres://admin:S3cr3t@db:5432/app`): only it is
    // masked, so the scheme, user and host stay searchable.
    kind: "url-password",
    mayMatch: matching(/:\/\/[^\s/@]{0,128}:[^\s/@]{1,256}@/),
    find: byPattern(
      /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s/:@'"`<>]{0,128}:([^\s/@'"`<>]{1,256})@(?=[A-Za-z0-9[])/dg,
      isCredentialValue,
    ),
  },
]

/** Index of the first accepted match starting at or after `start` (binary search). */
const insertionPoint = (accepted: ReadonlyArray<SecretMatch>, start: number): number => {
  let lo = 0
  let hi = accepted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (accepted[mid]!.start < start) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Every detector's necessary condition in one pattern (case-insensitive throughout, so it holds
 * whenever any `mayMatch` does): text it rejects — most text — is cleared in one pass instead
 * of one pass per detector (~1.8x faster on source listings, the bulk of a transcript's bytes).
 */
const anyDetectorMayMatch = new RegExp(
  [
    ":\\/\\/[^\\s/@]{0,128}:[^\\s/@]{1,256}@",
    "-----(?:BEGIN|END) |sk-|g(?:h[pousr]_|ithub_pat_|lpat-)|A(?:KIA|SIA|Iza)|xox[abprs]-|k_live_|eyJ",
    "b(?:earer|asic)[ \\t]|npm_|hf_|sg\\.[\\w-]{16}|hooks\\.slack|\\/webhooks\\/",
    "sk[0-9a-f]{32}|ac[0-9a-f]{32}:|private_key_id|mysql|mariadb|sshpass|redis-cli",
    "cookie[\\\\\"']*[ \\t]*:|auth[\\\\\"']*[ \\t]*:",
    // Every keyword of `credentialKeyword` (`pass` and `pwd` without their lookbehinds: a gate may
    // pass more text) and Azure's `AccountKey` / `SharedAccessKey`.
    "(?:pass(?:word|wd|phrase)?|pwd|secret(?:[_-]?key)?|api[_-]?key|acc(?:ess|ount)[_-]?key|private[_-]?key|token)[\\\\\"']*[ \\t]*[:=]",
  ].join("|"),
  "i",
)

/** Likely secrets in `text`, sorted by position and non-overlapping. */
export const findSecrets = (text: string): ReadonlyArray<SecretMatch> => {
  const accepted: Array<SecretMatch> = []
  if (typeof text !== "string" || !anyDetectorMayMatch.test(text)) return accepted
  for (const detector of detectors) {
    if (!detector.mayMatch(text)) continue
    for (const [start, end] of detector.find(text)) {
      if (end <= start) continue
      const at = insertionPoint(accepted, start)
      const before = accepted[at - 1]
      const after = accepted[at]
      if (before !== undefined && before.end > start) continue
      if (after !== undefined && after.start < end) continue
      accepted.splice(at, 0, { kind: detector.kind, start, end })
    }
  }
  return accepted
}

/** `text` with every likely secret replaced by `[redacted <kind>]`. */
export const maskSecrets = (text: string): string => {
  let out = ""
  let at = 0
  for (const m of findSecrets(text)) {
    out += `${text.slice(at, m.start)}[redacted ${m.kind}]`
    at = m.end
  }
  return out + text.slice(at)
}
