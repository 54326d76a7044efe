import { describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { detectSecrets, isSensitiveKey, MASK, redact } from "../../src/decisionlog/index.ts";

// Fake credentials, assembled at run time so that secret scanners do not flag this file.
const fake = {
  awsKeyId: ["AKIA", "IOSFODNN7EXAMPLE"].join(""),
  awsSecret: ["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY"].join(""),
  ghp: ["ghp", "_", "a1B2".repeat(9)].join(""),
  gho: ["gho", "_", "Z9y8".repeat(9)].join(""),
  githubPat: ["github", "_pat_", "11ABCDEFG0", "_abcdefghijklmnopqrstuvwxyz0123456789"].join(""),
  slack: ["xo", "xb-", "1234567890-abcdefghij"].join(""),
  openai: ["sk", "-proj-", "abcdefghijklmnopqrstuvwxyz123456"].join(""),
  jwt: ["eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiJhbGljZSJ9", "c2lnbmF0dXJlLWJ5dGVz"].join("."),
  pem: [
    "-----BEGIN RSA PRIVATE",
    " KEY-----\nMIIEowIBAAKCAQEAx\nAbCdEf==\n-----END RSA PRIVATE KEY-----",
  ].join(""),
};

function input(args: Record<string, unknown>, classification = "internal") {
  return { subject: { id: "alice" }, action: { name: "shell", data_classification: classification, args } };
}

describe("secret detectors", () => {
  const cases: [string, string, string][] = [
    ["aws_access_key_id", `export AWS_ACCESS_KEY_ID=${fake.awsKeyId}`, fake.awsKeyId],
    ["aws_secret_access_key", `aws_secret_access_key = ${fake.awsSecret}\n`, fake.awsSecret],
    ["github_token", `git clone https://${fake.ghp}@github.com/acme/site`, fake.ghp],
    ["github_token", `token ${fake.gho}`, fake.gho],
    ["github_token", `GH=${fake.githubPat}`, fake.githubPat],
    ["slack_token", `curl -d token=${fake.slack}`, fake.slack],
    ["openai_key", `OPENAI_API_KEY=${fake.openai}`, fake.openai],
    ["jwt", `id ${fake.jwt} end`, fake.jwt],
    ["pem_private_key", `key:\n${fake.pem}\ndone`, "MIIEowIBAAKCAQEAx"],
    ["bearer", "curl -H 'Authorization: Bearer abcdef0123456789.xyz' https://api", "abcdef0123456789.xyz"],
  ];

  it.each(cases)("%s: masks the secret inside a string and records the pointer", (name, text, secret) => {
    expect(detectSecrets(text)).toContain(name);
    const out = redact(input({ cmd: text }));
    const cmd = JSON.stringify(out.input);
    expect(cmd).not.toContain(secret);
    expect(cmd).toContain(MASK);
    expect(out.masked).toEqual(["/action/args/cmd"]);
    expect(out.erased).toEqual([]);
  });

  it("keeps the readable rest of a string", () => {
    const out = redact({ cmd: "curl -H 'Authorization: Bearer abcdef0123456789' https://api.example.com/x" });
    expect(out.input).toEqual({ cmd: `curl -H 'Authorization: Bearer ${MASK}' https://api.example.com/x` });
    const pem = redact({ file: `before\n${fake.pem}\nafter` });
    expect(pem.input).toEqual({ file: `before\n${MASK}\nafter` });
  });

  it("masks values of secret-named keys, case-insensitively, at any depth", () => {
    const names = [
      "password",
      "db_passwd",
      "client_secret",
      "refresh_token",
      "api_key",
      "apikey",
      "X-API-KEY",
      "Authorization",
      "Cookie",
      "private_key",
      "aws_secret_access_key",
      "PASSWORD_confirmation",
    ];
    for (const name of names) expect(isSensitiveKey(name), name).toBe(true);
    const out = redact({
      headers: [{ Authorization: "Basic dXNlcjpwYXNz" }],
      db: { password: "hunter2", port: 5432 },
    });
    expect(out.input).toEqual({ headers: [{ Authorization: MASK }], db: { password: MASK, port: 5432 } });
    expect(out.masked).toEqual(["/headers/0/Authorization", "/db/password"]);
  });

  it("leaves ordinary data alone", () => {
    const data = {
      max_tokens: 1024,
      token_count: 7,
      has_password: false,
      password: "",
      text: "the sk-learn task-runner uses a bearer of news; AKIA is a prefix",
      skip: "sk-short",
      nested: [{ path: "README.md" }],
    };
    const out = redact(data);
    expect(out).toEqual({ input: data, erased: [], masked: [] });
  });

  it("escapes pointer tokens", () => {
    const out = redact({ "a/b": { "c~d": `x ${fake.ghp}` } });
    expect(out.masked).toEqual(["/a~1b/c~0d"]);
  });

  it("can be turned off", () => {
    const out = redact({ password: "hunter2" }, { detectSecrets: false });
    expect(out.input).toEqual({ password: "hunter2" });
  });
});

describe("classification and pointer rules", () => {
  it("erases the arguments of secret actions", () => {
    const out = redact(input({ value: "s3cr3t", name: "x" }, "secret"));
    expect(out.input).toEqual({
      subject: { id: "alice" },
      action: { name: "shell", data_classification: "secret" },
    });
    expect(out.erased).toEqual(["/action/args"]);
  });

  it("keeps the arguments of other classifications, and honours configured ones", () => {
    expect(redact(input({ a: 1 }, "internal")).erased).toEqual([]);
    const out = redact(input({ a: 1 }, "pii"), { eraseClassifications: ["pii", "secret"] });
    expect(out.erased).toEqual(["/action/args"]);
    expect(redact(input({ a: 1 }, "secret"), { eraseClassifications: [] }).erased).toEqual([]);
  });

  it("erases and masks configured pointers", () => {
    const data = { user: { email: "a@example.com", ssn: "123-45-6789" }, items: ["x", "y", "z"] };
    const out = redact(data, {
      erase: ["/user/ssn", "/items/1", "/nope/deeper", "/items/9"],
      mask: ["/user/email", "/missing"],
    });
    expect(out.input).toEqual({ user: { email: MASK }, items: ["x", null, "z"] });
    expect(out.erased).toEqual(["/user/ssn", "/items/1"]);
    expect(out.masked).toEqual(["/user/email"]);
  });

  it("can mask or erase the whole document", () => {
    expect(redact({ a: 1 }, { mask: [""] })).toEqual({ input: MASK, erased: [], masked: [""] });
    expect(redact({ a: 1 }, { erase: [""] }).erased).toEqual([""]);
  });

  it("never changes the caller's value", () => {
    const data = input(
      { password: "hunter2", cmd: `x ${fake.openai}`, list: [{ token: "t0k3n" }] },
      "secret",
    );
    const before = structuredClone(data);
    const frozen = deepFreeze(data);
    redact(frozen, { mask: ["/subject/id"], erase: ["/action/name"] });
    redact(input({ password: "hunter2" }));
    expect(frozen).toEqual(before);
  });

  it("rejects invalid rules with field errors", () => {
    let error: unknown;
    try {
      redact({}, { erase: ["no-leading-slash"] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WritError);
    expect(error).toMatchObject({ category: "invalid_argument" });
    expect(error instanceof WritError ? error.fieldErrors[0]?.path : undefined).toBe("/redaction/erase/0");
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
