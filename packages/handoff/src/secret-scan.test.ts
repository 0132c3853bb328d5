import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { findSecrets, maskSecrets } from "./secret-scan.js"
import type { SecretKind } from "./secret-scan.js"

// Fake credentials, assembled at run time so that no credential-shaped literal sits in the repo.
const samples: ReadonlyArray<{ readonly kind: SecretKind; readonly secret: string }> = [
  { kind: "anthropic-api-key", secret: ["sk-ant-", "api03-", "Zx9Qw8".repeat(6)].join("") },
  { kind: "openai-api-key", secret: ["sk-", "proj-", "aB3dE5fG7hJ9kL1mN3pQ5rS7"].join("") },
  { kind: "openai-api-key", secret: ["sk-", "T3BlbkFJ".repeat(6)].join("") },
  { kind: "github-token", secret: ["ghp_", "a1B2".repeat(9)].join("") },
  { kind: "github-token", secret: ["gho_", "Z9y8".repeat(9)].join("") },
  { kind: "github-token", secret: ["ghs_", "Q7w6".repeat(9)].join("") },
  {
    kind: "github-token",
    secret: ["github_pat_", "11AB".repeat(6), "_", "x9Y8".repeat(10)].join(""),
  },
  { kind: "aws-access-key-id", secret: ["AKIA", "Z3X9Q7W2E5R8T1Y4"].join("") },
  { kind: "aws-access-key-id", secret: ["ASIA", "Q7W2E5R8T1Y4Z3X9"].join("") },
  { kind: "slack-token", secret: ["xoxb-", "123456789012-", "AbCdEfGhIjKl"].join("") },
  { kind: "google-api-key", secret: ["AIza", "Sy", "B1c2D3e4F5".repeat(3), "abc"].join("") },
  { kind: "stripe-secret-key", secret: ["sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"].join("") },
  {
    kind: "jwt",
    secret: ["eyJ", "hbGciOiJIUzI1NiJ9", ".eyJ", "zdWIiOiIxMjM0In0", ".sig_Abc-123"].join(""),
  },
  {
    kind: "private-key",
    secret: [
      "-----BEGIN RSA ",
      "PRIVATE KEY-----\n",
      "MIIEowIBAAKCAQEA".repeat(4),
      "\n",
      "q1w2e3r4t5y6u7i8o9p0".repeat(3),
      "==\n-----END RSA ",
      "PRIVATE KEY-----",
    ].join(""),
  },
  {
    // A short (truncated or test) key between a header and its footer.
    kind: "private-key",
    secret: [
      "-----BEGIN RSA ",
      "PRIVATE KEY-----\n",
      "MIIEpAIBAAKCAQEA",
      "\n-----END RSA ",
      "PRIVATE KEY-----",
    ].join(""),
  },
  { kind: "npm-token", secret: ["npm_", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"].join("") },
  { kind: "huggingface-token", secret: ["hf_", "aBcDeFgHiJkLmNoPqRsTuVwXyZabcdefgh"].join("") },
  { kind: "gitlab-token", secret: ["glpat-", "aBcDeFgHiJkLmNoPqRsT"].join("") },
  {
    kind: "sendgrid-api-key",
    secret: [
      "SG.",
      "aBcDeFgHiJkLmNoPqRsTuV",
      ".",
      "wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012",
    ].join(""),
  },
  {
    kind: "private-key",
    secret: [
      "-----BEGIN OPENSSH ",
      "PRIVATE KEY-----\n",
      "b3BlbnNzaC1rZXktdjEAAAAA".repeat(3),
    ].join(""),
  },
]

describe("findSecrets: token shapes", () => {
  for (const { kind, secret } of samples) {
    it(`finds ${kind} ${secret.slice(0, 6)}… with its exact span`, () => {
      const text = `Context: ${secret} (end)`
      expect(findSecrets(text)).toStrictEqual([
        { kind, start: "Context: ".length, end: "Context: ".length + secret.length },
      ])
    })
  }

  it("finds a bearer token and spans only the token", () => {
    const token = ["a1b2c3d4", "e5f6g7h8", "i9j0k1l2"].join("")
    const text = `curl -H "Authorization: Bearer ${token}"`
    const start = text.indexOf(token)
    expect(findSecrets(text)).toStrictEqual([
      { kind: "bearer-token", start, end: start + token.length },
    ])
  })

  it("prefers the specific kind when a generic pattern overlaps it", () => {
    const key = samples[0]!.secret
    expect(findSecrets(`ANTHROPIC_API_KEY=${key}`).map((m) => m.kind)).toStrictEqual([
      "anthropic-api-key",
    ])
    expect(findSecrets(`Authorization: Bearer ${key}`).map((m) => m.kind)).toStrictEqual([
      "anthropic-api-key",
    ])
  })

  it("returns several findings sorted by position", () => {
    const aws = samples[7]!.secret
    const gh = samples[3]!.secret
    const text = `${gh} and password=hunter2x and ${aws}`
    expect(findSecrets(text)).toStrictEqual([
      { kind: "github-token", start: 0, end: gh.length },
      {
        kind: "credential-assignment",
        start: text.indexOf("hunter2x"),
        end: text.indexOf("hunter2x") + "hunter2x".length,
      },
      { kind: "aws-access-key-id", start: text.indexOf(aws), end: text.length },
    ])
  })
})

describe("findSecrets: URL passwords", () => {
  const found: ReadonlyArray<readonly [string, string]> = [
    ["postgres://admin:S3cr3tPassw0rd@db.internal:5432/prod", "S3cr3tPassw0rd"],
    ["DATABASE_URL=mysql://app:p4ss-w0rd!@10.0.0.5/app", "p4ss-w0rd!"],
    ["git clone https://bot:ghs9x8y7z6w5v4@github.example/org/repo.git", "ghs9x8y7z6w5v4"],
    ["redis://:hunter2hunter2@cache:6379/0", "hunter2hunter2"],
  ]
  for (const [text, value] of found) {
    it(`flags only the password in ${JSON.stringify(text)}`, () => {
      const start = text.indexOf(value)
      expect(findSecrets(text)).toStrictEqual([
        { kind: "url-password", start, end: start + value.length },
      ])
      expect(maskSecrets(text)).toBe(text.replace(value, "[redacted url-password]"))
    })
  }

  const quiet = [
    "https://example.test/path",
    "postgres://user@db/app",
    "postgres://user:pass@db/app", // a placeholder: too short
    "postgres://user:${DB_PASSWORD}@db/app",
    "postgres://user:<password>@db/app",
    "see http://host:8080/x and mail me@example.test",
    "a://b:c@",
  ]
  for (const text of quiet) {
    it(`stays quiet on ${JSON.stringify(text)}`, () => {
      expect(findSecrets(text)).toStrictEqual([])
    })
  }
})

describe("findSecrets: credential assignments", () => {
  const found: ReadonlyArray<readonly [string, string]> = [
    ["password=hunter2x", "hunter2x"],
    ["passwd: c0rrect-horse", "c0rrect-horse"],
    ["export PGPASSWORD='S3cr3t-Value'", "S3cr3t-Value"],
    ['{"api_key": "Abc123def456"}', "Abc123def456"],
    ["client_secret = p@ssw0rd!!", "p@ssw0rd!!"],
    ["https://example.test/cb?token=abc123def456&next=1", "abc123def456"],
    ["SECRET_KEY=u8Hy6Tg5Rf4", "u8Hy6Tg5Rf4"],
    ["access-token: tok_9f8e7d6c", "tok_9f8e7d6c"],
  ]
  for (const [text, value] of found) {
    it(`flags the value in ${JSON.stringify(text)}`, () => {
      const start = text.indexOf(value)
      expect(findSecrets(text)).toStrictEqual([
        { kind: "credential-assignment", start, end: start + value.length },
      ])
    })
  }

  const quiet = [
    "The password is stored in 1Password; ask the user for it.",
    "Reset the secret rotation schedule and the token cache.",
    "password=",
    "password= ",
    'password=""',
    "password=<redacted>",
    "password=***",
    "password=********",
    "password=$PASSWORD",
    "password=${DB_PASSWORD}",
    "token: ${{ secrets.GH_TOKEN }}",
    "api_key=process.env.API_KEY",
    "api_key = os.environ['API_KEY']",
    "password: string",
    "token: z.string()",
    "secret == other",
    "password != previous",
    "max_tokens=4096",
    "max_token=4096",
    "passwordHash=abc123def",
    "password_file=/run/secrets/db_password",
    "DB_PASSWORD=/run/secrets/db",
    "token=abc",
    "token: 128000",
    "secret: 2025-01-31",
    "password=your_password_here1",
    "password=xxxxxxxx",
  ]
  for (const text of quiet) {
    it(`stays quiet on ${JSON.stringify(text)}`, () => {
      expect(findSecrets(text)).toStrictEqual([])
    })
  }
})

describe("findSecrets: more key shapes and assignment forms", () => {
  const basic = btoa(["username", ":", "supersecretpass"].join(""))
  const azureKey = [
    "Zq7Xk2mP9vL4nR8tY1wE6uI3oA5sD0fG",
    "Zq7Xk2mP9vL4nR8tY1wE6uI3oA5sD0fG",
    "Zq7Xk2mP9vL4nR8tYA==",
  ].join("")
  const slackPath = ["T01234567/", "B01234567/", "aBcDeFgHiJkLmNoPqRsTuVwX"].join("")
  const discordPath = ["123456789012345678/", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"].join("")
  const pw = ["QuotedPw", "!123x"].join("")
  const found: ReadonlyArray<readonly [string, string, SecretKind]> = [
    [`curl -H "Authorization: Basic ${basic}" https://api.test`, basic, "basic-auth"],
    [
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${azureKey};EndpointSuffix=core.windows.net`,
      azureKey,
      "azure-storage-key",
    ],
    [
      `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=${azureKey}`,
      azureKey,
      "azure-storage-key",
    ],
    [`POST https://hooks.slack.com/services/${slackPath}`, slackPath, "webhook-url"],
    [`url = "https://discord.com/api/webhooks/${discordPath}"`, discordPath, "webhook-url"],
    ["SMTP_PASS=mailpassword99", "mailpassword99", "credential-assignment"],
    ["MYSQL_PWD=MyPwdEnv22x mysql -u root", "MyPwdEnv22x", "credential-assignment"],
    ["openssl enc -pass pass:S3cretPhrase1 -in x", "S3cretPhrase1", "credential-assignment"],
    [
      "SESSION_SECRET=another-session-secret-value",
      "another-session-secret-value",
      "credential-assignment",
    ],
    ['export DB_PASSWORD="kept-out-of-the-repo"', "kept-out-of-the-repo", "credential-assignment"],
    // JSON-escaped quotes: a command rendered as JSON, and JSON in a JSON string.
    [
      JSON.stringify({ command: `export DB_PASSWORD="${pw}" && ./migrate` }),
      pw,
      "credential-assignment",
    ],
    [
      JSON.stringify({ body: `-d '{"username": "bob", "password": "${pw}"}'` }),
      pw,
      "credential-assignment",
    ],
    [
      JSON.stringify({ out: JSON.stringify({ result: JSON.stringify({ token: pw }) }) }),
      pw,
      "credential-assignment",
    ],
  ]
  for (const [text, value, kind] of found) {
    it(`flags ${JSON.stringify(value.slice(0, 12))} in ${JSON.stringify(text.slice(0, 50))}`, () => {
      const start = text.indexOf(value)
      expect(findSecrets(text)).toStrictEqual([{ kind, start, end: start + value.length }])
    })
  }

  const quiet = [
    // Hashes, ids and encodings.
    "fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b and abc1234",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "payload aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Qgb2YgYmFzZTY0IGVuY29kaW5nIGZvciBhIGxvbmdlciBzdHJpbmc=",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "the header eyJhbGciOiJIUzI1NiJ9 alone is not a token",
    // Prose, types and references.
    "The password reset flow emails a link; the pass rate is 90% and pwd prints the directory.",
    "Basic usage: see the basic authentication section; Basic dXNlcm5hbWU is cut short.",
    "password: string",
    "pass: boolean",
    "const pwd = process.cwd()",
    "password = process.env.PASSWORD",
    "PASSWORD=$PASSWORD",
    "SMTP_PASS=${SMTP_PASS}",
    "MYSQL_PWD=",
    'export DB_PASSWORD=""',
    '{"password": ""}',
    "bypass=abc123x compass: n0rth",
    "OLDPWD=/home/user PWD=/home/user/app pwd=$(pwd)",
    // Environment assignments whose value is a name, not a secret.
    "SECRET_NAME=my-app-secret-name",
    "TOKEN_TYPE=bearer-token-type",
    "API_SECRET=your-api-secret-here",
    "JWT_SECRET=change-me-in-production",
    "SESSION_SECRET=short-value",
    "secret: my-tls-secret-name",
    // Look-alikes of the new prefixes.
    "npm_config_cache=/tmp/npm and npm_package_json",
    "hf_hub_download(repo_id) and hf_transfer",
    "msg.send(x) and SG.short.token",
    "see hooks.slack.com/services/ for the docs",
    "AccountKey=<your-key>",
    "-----BEGIN RSA PRIVATE KEY-----\nYOUR KEY HERE\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\nAAAAAAAAAAAAAAAA\n-----END RSA PRIVATE KEY-----",
  ]
  for (const text of quiet) {
    it(`stays quiet on ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(findSecrets(text)).toStrictEqual([])
    })
  }
})

describe("findSecrets: service keys, database commands, cookies and registry logins", () => {
  const hex = (n: number, unit: string): string =>
    unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
  const twilioKey = ["SK", hex(32, "a1b2c3d4e5f60789")].join("")
  const accountSid = ["AC", hex(32, "0f1e2d3c4b5a6978")].join("")
  const authToken = hex(32, "f9e8d7c6b5a4")
  const keySecret = ["Ab12Cd34", "Ef56Gh78", "Ij90Kl12", "Mn34Op56"].join("")
  const keyId = hex(40, "4c3b2a19f8e7d6")
  const pw = ["S3cr", "etPw9"].join("")
  const session = ["s%3A", "Kx9vQ2", "mZ7pL4wR8tY1nB6.aBc"].join("")
  const docker = btoa(["ci-bot", ":", "Pa55w0rd-registry"].join(""))
  const escaped = ['ab\\"', "cd12345"].join("")
  const found: ReadonlyArray<readonly [text: string, secret: string, kind: SecretKind]> = [
    // Twilio: an API key, an auth token after its variable, the secret after a SID or key.
    [`TWILIO_API_KEY=${twilioKey}`, twilioKey, "credential-assignment"],
    [`Created API key ${twilioKey} for the worker`, twilioKey, "credential-assignment"],
    [`TWILIO_AUTH_TOKEN=${authToken}`, authToken, "credential-assignment"],
    [
      `curl -u ${accountSid}:${authToken} https://api.twilio.test`,
      authToken,
      "credential-assignment",
    ],
    // A Google service-account key file, plain and JSON-escaped.
    [`{"type": "service_account", "private_key_id": "${keyId}"}`, keyId, "credential-assignment"],
    [JSON.stringify(JSON.stringify({ private_key_id: keyId })), keyId, "credential-assignment"],
    // MySQL and MariaDB clients.
    [`mysql -u root -p${pw} app`, pw, "credential-assignment"],
    [`mysqldump -uroot -p'${pw}' app > dump.sql`, pw, "credential-assignment"],
    [`cat dump.sql | mariadb -h db -u app -p${pw} app`, pw, "credential-assignment"],
    ["mysql -u root --password=rootroot app", "rootroot", "credential-assignment"],
    // sshpass and redis-cli.
    [`sshpass -p ${pw} ssh deploy@host`, pw, "credential-assignment"],
    [`sshpass -v -p'${pw}' scp -P 2222 f host:`, pw, "credential-assignment"],
    [`sshpass -ppl41nw0rd rsync -a . host:`, "pl41nw0rd", "credential-assignment"],
    [`redis-cli -h cache -p 6380 -a ${pw} PING`, pw, "credential-assignment"],
    [`redis-cli --user app --pass "${pw}" INFO`, pw, "credential-assignment"],
    // Cookies: by name, and long values under any name.
    [`curl -H "Cookie: theme=dark; connect.sid=${session}" x`, session, "credential-assignment"],
    [`Set-Cookie: sid=${pw}; Path=/; HttpOnly`, pw, "credential-assignment"],
    [`{"Cookie": "prefs=1; remember_me=${session}"}`, session, "credential-assignment"],
    // A Docker registry login.
    [`{"auths": {"registry.test": {"auth": "${docker}"}}}`, docker, "basic-auth"],
    [
      `DOCKER_AUTH_CONFIG=${JSON.stringify(JSON.stringify({ auths: { r: { auth: docker } } }))}`,
      docker,
      "basic-auth",
    ],
    // A quoted value with an escaped quote is masked whole, plain and JSON-escaped.
    [`password="${escaped}" next`, escaped, "credential-assignment"],
    [
      `password='${escaped.replace('"', "'")}' next`,
      escaped.replace('"', "'"),
      "credential-assignment",
    ],
  ]
  for (const [text, secret, kind] of found) {
    it(`flags ${JSON.stringify(secret.slice(0, 8))}… in ${JSON.stringify(text.slice(0, 40))}`, () => {
      const start = text.indexOf(secret)
      expect(findSecrets(text)).toStrictEqual([{ kind, start, end: start + secret.length }])
    })
  }

  it("masks the value after an escaped quote in JSON-escaped text too", () => {
    const text = JSON.stringify({ command: `export DB_PASSWORD="${escaped}" && ./migrate` })
    expect(maskSecrets(text)).toBe(
      JSON.stringify({
        command: 'export DB_PASSWORD="[redacted credential-assignment]" && ./migrate',
      }),
    )
  })

  it("masks each credential cookie and keeps every name visible", () => {
    const text = `Cookie: session=${pw}; theme=dark; token=${pw}x; lang=en`
    expect(maskSecrets(text)).toBe(
      "Cookie: session=[redacted credential-assignment]; theme=dark; token=[redacted credential-assignment]; lang=en",
    )
  })

  it("masks a Twilio key and its secret separately", () => {
    expect(maskSecrets(`-u ${twilioKey}:${keySecret}`)).toBe(
      "-u [redacted credential-assignment]:[redacted credential-assignment]",
    )
  })

  it("already masks a PEM private key inside a service-account key file", () => {
    const pem = [
      "-----BEGIN ",
      "PRIVATE KEY-----\n",
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
      "\n-----END ",
      "PRIVATE KEY-----\n",
    ].join("")
    const text = JSON.stringify({ type: "service_account", private_key: pem })
    expect(findSecrets(text).map((m) => m.kind)).toStrictEqual(["private-key"])
  })

  it("already masks psql URL passwords and PGPASSWORD", () => {
    expect(maskSecrets(`psql postgresql://app:${pw}@db/app`)).toBe(
      "psql postgresql://app:[redacted url-password]@db/app",
    )
    expect(maskSecrets(`PGPASSWORD=${pw} psql -h db`)).toBe(
      "PGPASSWORD=[redacted credential-assignment] psql -h db",
    )
  })

  const quiet = [
    // Hashes and ids, including a Twilio account SID alone.
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 123e4567-e89b-12d3-a456-426614174000",
    `md5 ${hex(32, "a1b2c3d4e5f60789")} and sha256 ${hex(64, "9f86d081884c7d65")}`,
    `account ${accountSid}`,
    `TWILIO_ACCOUNT_SID=${accountSid}`,
    `TASK${hex(32, "a1b2c3d4e5f60789")}`,
    `"private_key_id": "<your-key-id>"`,
    // Cookies without credentials, and Set-Cookie attributes.
    "Cookie: theme=dark; lang=en",
    "Set-Cookie: theme=dark; Path=/; Domain=subdomain.example-company1.test; Max-Age=3600",
    "Cookie: session=<session-id>",
    "document.cookie holds cookies: see the docs",
    // Database commands without a password, and -p meaning something else.
    "mysql -u root -h localhost db",
    "mysql -u root -p app",
    "mysql -P 3306 -u root -p$MYSQL_PWD app",
    "mysql -u root -ppassword app",
    "ssh -p 2222 deploy@host",
    "docker run -p 8080:80 nginx",
    "scp -P 2222 -p file host:",
    "sshpass -f ~/.pw ssh -p 2222 deploy@host",
    "sshpass -e ssh -p 2222 deploy@host",
    "sshpass -f pw.txt rsync -av -p build/ host:/srv",
    "sshpass -p $SSHPASS ssh deploy@host",
    "redis-cli -h cache -p 6380 PING",
    "redis-cli -a $REDIS_PASSWORD PING",
    "redis-cli -a --no-auth-warning PING",
    // Registry logins that are not user:password.
    '"auth": "none"',
    `"auth": "${btoa("tokenonly12")}"`,
    "auth: required",
  ]
  for (const text of quiet) {
    it(`stays quiet on ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(findSecrets(text)).toStrictEqual([])
    })
  }

  it("handles long adversarial runs of the new shapes", () => {
    const n = 100_000
    const inputs = [
      `mysql ${"mysql ".repeat(n / 6)}`,
      `mysql ${"x ".repeat(n / 2)}-p`,
      `sshpass ${"-v ".repeat(n / 3)}-f`,
      `redis-cli ${"x ".repeat(n / 2)}-a`,
      "Cookie: ".repeat(n / 8),
      `Cookie: ${"a=b;".repeat(n / 4)}`,
      `"auth": "${"A".repeat(n)}-`,
      "SK".repeat(n / 2),
      `password="${"\\\\".repeat(n / 2)}`,
      `password=\\"${"\\\\\\\\".repeat(n / 4)}`,
      `private_key_id: ${"a".repeat(n)}`,
    ]
    const started = performance.now()
    expect(inputs.map((text) => findSecrets(text).length)).toStrictEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ])
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})

describe("findSecrets: the tail of a private key", () => {
  // `tail -4 key.pem`: the last body lines and the footer, no header.
  const footer = ["-----END ", "PRIVATE KEY-----"].join("")
  const body = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC".repeat(2),
    "q1w2e3r4t5y6u7i8o9p0AbCd",
    "Zm9vYmE=",
  ]

  it("masks the base64 lines directly above a footer, through the footer", () => {
    const tail = [...body, footer].join("\n")
    const text = `the end of the key:\n${tail}\nthat is all`
    expect(findSecrets(text)).toStrictEqual([
      {
        kind: "private-key",
        start: text.indexOf(body[0]!),
        end: text.indexOf(footer) + footer.length,
      },
    ])
    expect(maskSecrets(text)).toBe("the end of the key:\n[redacted private-key]\nthat is all")
  })

  it("masks a tail with CRLF line ends, indented lines and other key types", () => {
    const rsa = ["-----END RSA ", "PRIVATE KEY-----"].join("")
    const crlf = `$ tail -3 id_rsa\r\n${body.join("\r\n")}\r\n${rsa}\r\n`
    expect(maskSecrets(crlf)).toBe("$ tail -3 id_rsa\r\n[redacted private-key]\r\n")
    const indented = `output:\n    ${body.join("\n    ")}\n    ${footer}`
    expect(maskSecrets(indented)).toBe("output:\n    [redacted private-key]")
    const pgp = ["-----END PGP ", "PRIVATE KEY BLOCK-----"].join("")
    expect(maskSecrets(`${body.join("\n")}\n=Ab1c\n${pgp}`)).toBe("[redacted private-key]")
  })

  it("masks a tail whose line breaks were lost", () => {
    expect(maskSecrets(`key: ${body.join("")}${footer}`)).toBe("key: [redacted private-key]")
  })

  it("leaves a footer with prose, a placeholder or too little above it alone", () => {
    for (const text of [
      `The file ends with ${footer} and a newline.`,
      `${footer}`,
      `Done.\n${footer}`,
      `short\nlines\nonly\n${footer}`,
      `-----BEGIN PRIVATE KEY-----\n...\n${footer}`,
      `${"A".repeat(40)} and prose\n${footer}`,
      `${footer}${"A".repeat(40)}${footer}`,
    ]) {
      expect(findSecrets(text), text).toStrictEqual([])
    }
  })

  it("keeps a whole block as one span", () => {
    const header = ["-----BEGIN ", "PRIVATE KEY-----"].join("")
    const text = `x\n${header}\n${body.join("\n")}\n${footer}\n`
    expect(findSecrets(text)).toStrictEqual([
      { kind: "private-key", start: 2, end: text.length - 1 },
    ])
  })
})

describe("findSecrets: prose and look-alikes", () => {
  const quiet = [
    "Use sk-learn for the classifier.",
    "The CSS class sk-this-is-not-a-key-at-all-really stays.",
    "Bearer tokens expire after an hour.",
    "Authorization: Bearer <token>",
    "ghp_ prefixes mark classic GitHub tokens.",
    "AKIA is the prefix of AWS access key ids.",
    "Files start with -----BEGIN PRIVATE KEY----- in PKCS#8 format.",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "eyJ is how base64 JSON starts.",
    "café 日本語 😀 𝄞 plain text",
    "",
  ]
  for (const text of quiet) {
    it(`stays quiet on ${JSON.stringify(text.slice(0, 40))}`, () => {
      expect(findSecrets(text)).toStrictEqual([])
    })
  }
})

describe("maskSecrets", () => {
  it("replaces each secret with its kind and keeps the rest of the text", () => {
    const gh = samples[3]!.secret
    expect(maskSecrets(`token ${gh} and password=hunter2x done`)).toBe(
      "token [redacted github-token] and password=[redacted credential-assignment] done",
    )
  })

  it("returns text without secrets unchanged", () => {
    expect(maskSecrets("nothing to see: café 😀")).toBe("nothing to see: café 😀")
  })
})

const words = fc
  .array(fc.constantFrom("the", "run", "tests", "é", "😀", "日本", "a=b", "(x)", "key:", "\n"), {
    maxLength: 8,
  })
  .map((ws) => ws.join(" "))

describe("secret scan properties", () => {
  it("finds and masks every sample secret embedded in prose", () => {
    fc.assert(
      fc.property(fc.constantFrom(...samples), words, words, ({ kind, secret }, before, after) => {
        const text = `${before} ${secret} ${after}`
        const start = before.length + 1
        expect(findSecrets(text)).toContainEqual({ kind, start, end: start + secret.length })
        const masked = maskSecrets(text)
        expect(masked).not.toContain(secret)
        expect(masked).toContain(`[redacted ${kind}]`)
      }),
      { numRuns: 300 },
    )
  })

  it("never throws and returns sorted, non-overlapping, in-bounds spans", () => {
    const alphabet = fc.constantFrom(
      ..."sk-ant_ghpAKIAxoxbeyJ.BEGIN PRIVATE KEY-----=:'\"password token0123456789\n ".split(""),
    )
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 400 }), fc.string()), (text) => {
        const found = findSecrets(text)
        let at = 0
        for (const m of found) {
          expect(m.start).toBeGreaterThanOrEqual(at)
          expect(m.end).toBeGreaterThan(m.start)
          expect(m.end).toBeLessThanOrEqual(text.length)
          at = m.end
        }
        expect(findSecrets(maskSecrets(text))).toStrictEqual([])
      }),
      { numRuns: 500 },
    )
  })

  it("handles long adversarial runs (no super-linear backtracking)", () => {
    const n = 100_000
    const inputs = [
      "a".repeat(n),
      "_".repeat(n),
      "-".repeat(n),
      "sk-".repeat(n / 3),
      `eyJ${"a".repeat(n)}`,
      "password = ".repeat(n / 11),
      "x_".repeat(n / 2),
      "-----BEGIN PRIVATE KEY-----".repeat(2_000),
      `-----BEGIN ${"A ".repeat(n / 2)}`,
      `bearer ${"a".repeat(n)}`,
      "-----END PRIVATE KEY-----".repeat(4_000),
      `-----END ${"A ".repeat(n / 2)}`,
      `${"a".repeat(n)}\n-----END ${"A ".repeat(n / 2)}`,
      `${"a ".repeat(n / 2)}x-----END PRIVATE KEY-----`,
      `${"a".repeat(n)} x-----END PRIVATE KEY-----`.repeat(20),
    ]
    expect(inputs.map((text) => findSecrets(text).length)).toStrictEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ])
  })
})
