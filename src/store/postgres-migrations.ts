/**
 * The PostgreSQL schema as numbered migrations (the counterpart of `migrations.ts`). A migration
 * is never edited once released: changes come as a new, higher version. `schema_migrations`
 * records which versions a database has; instances apply them one at a time under an advisory
 * lock, so several instances starting together are safe.
 */
import type { Migration } from "./migrations.ts";

export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "resources, grant uses, decision log",
    sql: `
CREATE TABLE resources (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  owner TEXT NOT NULL,
  tenant TEXT NOT NULL,
  revision BIGINT NOT NULL CHECK (revision > 0),
  attributes TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (type, id)
);

CREATE TABLE grant_uses (
  jti TEXT PRIMARY KEY,
  uses INTEGER NOT NULL,
  max_uses INTEGER NOT NULL CHECK (max_uses > 0),
  -- milliseconds since the Unix epoch
  expires_at BIGINT NOT NULL
);
CREATE INDEX grant_uses_expires_at ON grant_uses (expires_at);

-- One global chain: seq is assigned under an advisory lock (never a SEQUENCE, which leaves gaps
-- on rollback). The hashed entry (without seq, prev_hash and hash) is the JSON text in entry,
-- kept byte for byte; the filter columns are generated from it, so they cannot disagree with
-- what the hash covers.
CREATE TABLE decisions (
  seq BIGINT PRIMARY KEY CHECK (seq > 0),
  entry TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  decision_id TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'decision_id') STORED,
  logged_at TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'timestamp') STORED,
  subject TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'subject') STORED,
  tenant TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'tenant') STORED,
  action TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'action') STORED,
  resource_type TEXT GENERATED ALWAYS AS (entry::jsonb -> 'resource' ->> 'type') STORED,
  resource_id TEXT GENERATED ALWAYS AS (entry::jsonb -> 'resource' ->> 'id') STORED,
  decision TEXT GENERATED ALWAYS AS (entry::jsonb ->> 'decision') STORED
);
CREATE UNIQUE INDEX decisions_decision_id ON decisions (decision_id);
CREATE INDEX decisions_logged_at ON decisions (logged_at);
CREATE INDEX decisions_subject ON decisions (subject);
CREATE INDEX decisions_tenant ON decisions (tenant);
CREATE INDEX decisions_action ON decisions (action);
CREATE INDEX decisions_resource ON decisions (resource_type, resource_id);
CREATE INDEX decisions_decision ON decisions (decision);

-- Every reason code of every entry, for the indexed "any reason" filter.
CREATE TABLE decision_reasons (
  code TEXT NOT NULL,
  seq BIGINT NOT NULL,
  PRIMARY KEY (code, seq)
);
`,
  },
  {
    version: 2,
    name: "approvals",
    sql: `
-- One row per approval request: the whole request is the JSON in record; the columns filter lists
-- by index, and a decision is one compare-and-swap UPDATE on status.
CREATE TABLE approvals (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  requester TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  approver_roles TEXT[] NOT NULL,
  -- milliseconds since the Unix epoch
  expires_at BIGINT NOT NULL,
  record JSONB NOT NULL
);
CREATE INDEX approvals_requester ON approvals (requester, seq);
CREATE INDEX approvals_status ON approvals (status, seq);
CREATE INDEX approvals_roles ON approvals USING GIN (approver_roles);
`,
  },
  {
    version: 3,
    name: "idempotency keys",
    sql: `
CREATE TABLE idempotency (
  subject TEXT NOT NULL,
  key TEXT NOT NULL,
  request_digest TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
  outcome TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (subject, key)
);
CREATE INDEX idempotency_expires_at ON idempotency (expires_at);
`,
  },
  {
    version: 4,
    name: "grant signing keys",
    sql: `
-- The grant signing key set every instance signs with and publishes (one row; the document is
-- the same JSON a grant key file holds). revision increases on every change, so an instance
-- notices a rotation by another with one cheap read.
CREATE TABLE grant_key_set (
  id SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  revision BIGINT NOT NULL,
  document TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 5,
    name: "call cancellations",
    sql: `
-- As SQLite's version 4: a cancellation another instance received, kept until expires_at.
CREATE TABLE call_cancellations (
  key TEXT PRIMARY KEY,
  reason TEXT,
  expires_at BIGINT NOT NULL
);
CREATE INDEX call_cancellations_expires_at ON call_cancellations (expires_at);
`,
  },
  {
    version: 7,
    name: "decision log checkpoints",
    sql: `
-- As SQLite's version 6: signed checkpoints of the decision log's head, one per seq.
CREATE TABLE checkpoints (
  seq BIGINT PRIMARY KEY CHECK (seq > 0),
  hash TEXT NOT NULL,
  time TEXT NOT NULL,
  kid TEXT NOT NULL,
  jws TEXT NOT NULL
);

-- The checkpoint signing key set every instance shares (as SQLite's).
CREATE TABLE checkpoint_key_set (
  id SMALLINT PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL,
  document TEXT NOT NULL
);
`,
  },
  {
    version: 8,
    name: "approval call keys and collected grants",
    sql: `
-- As SQLite's version 7: the key of the proposed call (its open request is found again by it;
-- older requests have none) and the jti of the one grant its requester collected.
ALTER TABLE approvals ADD COLUMN call_key TEXT;
ALTER TABLE approvals ADD COLUMN grant_jti TEXT;
UPDATE approvals SET grant_jti = record->>'grant_jti';
CREATE INDEX approvals_call_key ON approvals (call_key, seq);
`,
  },
  {
    version: 9,
    name: "console sessions",
    sql: `
-- As SQLite's version 8: one row per console sign-in, keyed by the SHA-256 of the cookie's opaque
-- id (the id itself is never stored); times in milliseconds since the Unix epoch.
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  tenant TEXT NOT NULL,
  issuer TEXT NOT NULL,
  roles TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);
`,
  },
  {
    version: 10,
    name: "decision log shipping",
    sql: `
-- As SQLite's version 9: the last seq a decision-log destination acknowledged, and the lease of
-- the one instance that ships to it (lease_until in milliseconds since the Unix epoch).
CREATE TABLE log_shipping (
  target TEXT PRIMARY KEY,
  shipped_seq BIGINT NOT NULL CHECK (shipped_seq >= 0),
  holder TEXT,
  lease_until BIGINT NOT NULL
);
`,
  },
  {
    version: 11,
    name: "decisions by path",
    sql: `
-- As SQLite's version 10: entries by their policy path (the dialect's entryPath).
CREATE INDEX decisions_path ON decisions ((entry::jsonb ->> 'path'));
`,
  },
  {
    version: 12,
    name: "policy revisions",
    sql: `
-- As SQLite's version 11: every policy revision Writ loaded, under the id decision-log entries
-- name, with its content (a folder's sources and data as JSON, or a bundle's bytes); one row per id.
CREATE TABLE policy_revisions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('directory', 'bundle')),
  origin TEXT NOT NULL,
  loaded_at BIGINT NOT NULL,
  size BIGINT NOT NULL CHECK (size >= 0),
  digest TEXT NOT NULL,
  content BYTEA NOT NULL
);
`,
  },
  {
    version: 13,
    name: "concurrency group leases",
    sql: `
-- As SQLite's version 12: the holder of each concurrency group's lease while its committing call
-- runs, across every instance (lease_until in milliseconds since the Unix epoch).
CREATE TABLE group_leases (
  grp TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  lease_until BIGINT NOT NULL
);
`,
  },
  {
    version: 14,
    name: "limit usage",
    sql: `
-- As SQLite's version 13: one row per bucket of a limit, what was used (level) as of at
-- (milliseconds since the Unix epoch).
CREATE TABLE limit_usage (
  key TEXT PRIMARY KEY,
  level DOUBLE PRECISION NOT NULL CHECK (level >= 0),
  at BIGINT NOT NULL
);
`,
  },
  {
    version: 15,
    name: "history facts",
    sql: `
-- As SQLite's version 14: the buckets of history facts (times in milliseconds since the Unix epoch).
CREATE TABLE history_buckets (
  fact TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  bucket BIGINT NOT NULL,
  count BIGINT NOT NULL CHECK (count >= 0),
  total DOUBLE PRECISION NOT NULL,
  last_at BIGINT NOT NULL,
  last_decision TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (fact, key_hash, bucket)
);
CREATE INDEX history_buckets_expires_at ON history_buckets (expires_at);
`,
  },
  {
    version: 16,
    name: "mcp sessions",
    sql: `
-- As SQLite's version 15: 2025-11-25 MCP sessions (the id's SHA-256, tenant, subject, revision,
-- the client's capabilities as JSON, expiring with the token that opened them), the resources
-- each subscribed, and the SSE events of its streams kept for Last-Event-ID (seq the event id).
CREATE TABLE mcp_sessions (
  id_hash TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  subject TEXT NOT NULL,
  protocol_version TEXT NOT NULL,
  capabilities TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_expires_at ON mcp_sessions (expires_at);
CREATE TABLE mcp_session_subscriptions (
  id_hash TEXT NOT NULL,
  uri TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (id_hash, uri)
);
CREATE TABLE mcp_session_events (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id_hash TEXT NOT NULL,
  stream TEXT NOT NULL,
  message TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX mcp_session_events_stream ON mcp_session_events (id_hash, stream, seq);
CREATE INDEX mcp_session_events_expires_at ON mcp_session_events (expires_at);
`,
  },
  {
    version: 17,
    name: "mcp tasks",
    sql: `
-- As SQLite's version 16: the MCP tasks extension's tasks, bound to tenant and owner, forgotten
-- past expires_at (milliseconds since the Unix epoch).
CREATE TABLE mcp_tasks (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  owner TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message TEXT,
  call TEXT NOT NULL,
  approval_id TEXT,
  input_key TEXT,
  result TEXT,
  error TEXT,
  runner TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX mcp_tasks_expires_at ON mcp_tasks (expires_at);
`,
  },
];
