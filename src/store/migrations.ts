/**
 * The SQLite schema as numbered migrations. A migration is never edited once released: changes
 * come as a new, higher version. `schema_migrations` records which versions a file has.
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "resources, grant uses, decision log",
    sql: `
CREATE TABLE resources (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  owner TEXT NOT NULL,
  tenant TEXT NOT NULL,
  revision INTEGER NOT NULL CHECK (revision > 0),
  attributes TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (type, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE grant_uses (
  jti TEXT PRIMARY KEY,
  uses INTEGER NOT NULL,
  max_uses INTEGER NOT NULL CHECK (max_uses > 0),
  -- milliseconds since the Unix epoch
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX grant_uses_expires_at ON grant_uses (expires_at);

-- The hashed entry (without seq, prev_hash and hash) is the JSON in entry; the filter columns
-- are generated from it, so they can never disagree with what the hash covers.
CREATE TABLE decisions (
  seq INTEGER PRIMARY KEY,
  entry TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  decision_id TEXT GENERATED ALWAYS AS (json_extract(entry, '$.decision_id')) VIRTUAL,
  timestamp TEXT GENERATED ALWAYS AS (json_extract(entry, '$.timestamp')) VIRTUAL,
  subject TEXT GENERATED ALWAYS AS (json_extract(entry, '$.subject')) VIRTUAL,
  tenant TEXT GENERATED ALWAYS AS (json_extract(entry, '$.tenant')) VIRTUAL,
  action TEXT GENERATED ALWAYS AS (json_extract(entry, '$.action')) VIRTUAL,
  resource_type TEXT GENERATED ALWAYS AS (json_extract(entry, '$.resource.type')) VIRTUAL,
  resource_id TEXT GENERATED ALWAYS AS (json_extract(entry, '$.resource.id')) VIRTUAL,
  decision TEXT GENERATED ALWAYS AS (json_extract(entry, '$.decision')) VIRTUAL
) STRICT;
CREATE UNIQUE INDEX decisions_decision_id ON decisions (decision_id);
CREATE INDEX decisions_timestamp ON decisions (timestamp);
CREATE INDEX decisions_subject ON decisions (subject);
CREATE INDEX decisions_tenant ON decisions (tenant);
CREATE INDEX decisions_action ON decisions (action);
CREATE INDEX decisions_resource ON decisions (resource_type, resource_id);
CREATE INDEX decisions_decision ON decisions (decision);

-- Every reason code of every entry, for the indexed "any reason" filter. Derived from the entry
-- at insert; queries confirm each match against the entry itself.
CREATE TABLE decision_reasons (
  code TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (code, seq)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 2,
    name: "approvals",
    sql: `
-- One row per approval request. The whole request is the JSON in record; status, tenant,
-- requester, approver_roles and expires_at (milliseconds since the Unix epoch) are columns so that
-- lists filter by index and a decision is a compare-and-swap on status.
CREATE TABLE approvals (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  requester TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  approver_roles TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  record TEXT NOT NULL
) STRICT;
CREATE INDEX approvals_requester ON approvals (requester, seq);
CREATE INDEX approvals_status ON approvals (status, seq);
`,
  },
  {
    version: 3,
    name: "idempotency keys",
    sql: `
-- One row per (subject, key) of an Idempotency-Key request: the first request claims it (state
-- pending), stores its outcome when done; a repeat with the same request digest gets the stored
-- outcome. expires_at is milliseconds since the Unix epoch.
CREATE TABLE idempotency (
  subject TEXT NOT NULL,
  key TEXT NOT NULL,
  request_digest TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
  outcome TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (subject, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_expires_at ON idempotency (expires_at);
`,
  },
  {
    version: 4,
    name: "call cancellations",
    sql: `
-- A caller's request to cancel a running call (MCP notifications/cancelled), for the instance that
-- runs it when another instance received it. key names the tenant, subject and JSON-RPC id;
-- expires_at is milliseconds since the Unix epoch.
CREATE TABLE call_cancellations (
  key TEXT PRIMARY KEY,
  reason TEXT,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX call_cancellations_expires_at ON call_cancellations (expires_at);
`,
  },
  {
    version: 6,
    name: "decision log checkpoints",
    sql: `
-- Signed checkpoints of the decision log's head: jws is the compact JWS of {seq, hash, time}
-- signed with the checkpoint key kid; seq, hash and time repeat its payload for queries. One per
-- seq: instances that checkpoint the same head keep the first.
CREATE TABLE checkpoints (
  seq INTEGER PRIMARY KEY CHECK (seq > 0),
  hash TEXT NOT NULL,
  time TEXT NOT NULL,
  kid TEXT NOT NULL,
  jws TEXT NOT NULL
) STRICT;

-- The checkpoint signing key set when no key file is configured (one row; the document is the
-- JSON a grant key file holds). revision increases on every change.
CREATE TABLE checkpoint_key_set (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL,
  document TEXT NOT NULL
) STRICT;
`,
  },
  {
    version: 7,
    name: "approval call keys and collected grants",
    sql: `
-- call_key names the proposed call (requester, contract, action and argument digest, resource and
-- revision) so that proposing it again finds its open request; grant_jti is set when the requester
-- collects the grant, which is minted then (at most once per request). Requests stored before this
-- version have no call_key: they are never matched.
ALTER TABLE approvals ADD COLUMN call_key TEXT;
ALTER TABLE approvals ADD COLUMN grant_jti TEXT;
UPDATE approvals SET grant_jti = json_extract(record, '$.grant_jti');
CREATE INDEX approvals_call_key ON approvals (call_key, seq);
`,
  },
  {
    version: 8,
    name: "console sessions",
    sql: `
-- One row per console sign-in (src/console/session.ts). The cookie holds an opaque random id; only
-- its SHA-256 (id_hash) is stored, so the table alone signs no one in. Times are milliseconds since
-- the Unix epoch; expires_at = min(token expiry, the configured maximum); revoked_at is set by
-- sign-out. roles and scopes are JSON arrays. Rows are pruned once expired.
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  tenant TEXT NOT NULL,
  issuer TEXT NOT NULL,
  roles TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);
`,
  },
  {
    version: 9,
    name: "decision log shipping",
    sql: `
-- Where shipping the decision log to a destination got to (src/decisionlog/ship/): shipped_seq is
-- the last seq the destination acknowledged; holder and lease_until (milliseconds since the Unix
-- epoch) are the lease of the one instance that ships to it. target names the destination.
CREATE TABLE log_shipping (
  target TEXT PRIMARY KEY,
  shipped_seq INTEGER NOT NULL CHECK (shipped_seq >= 0),
  holder TEXT,
  lease_until INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 10,
    name: "decisions by path",
    sql: `
-- Entries by their policy path (writ/decision, writ/shadow, …): a shadow policy's disagreements
-- are listed by it. The expression is the one the path filter uses (the dialect's entryPath).
CREATE INDEX decisions_path ON decisions (json_extract(entry, '$.path'));
`,
  },
  {
    version: 11,
    name: "policy revisions",
    sql: `
-- Every policy revision Writ loaded (src/policy/revisions.ts), under the id decision-log entries
-- name: kind is directory (content: the folder's sources and data files as JSON) or bundle
-- (content: the bundle's bytes); origin is where it was loaded from; loaded_at (milliseconds since
-- the Unix epoch) its first load; digest the SHA-256 of content. One row per id: loading the same
-- revision again changes nothing. Policies are the deployment's: no tenant.
CREATE TABLE policy_revisions (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('directory', 'bundle')),
  origin TEXT NOT NULL,
  loaded_at INTEGER NOT NULL,
  size INTEGER NOT NULL CHECK (size >= 0),
  digest TEXT NOT NULL,
  content BLOB NOT NULL
) STRICT;
`,
  },
  {
    version: 12,
    name: "concurrency group leases",
    sql: `
-- Who runs a committing call of a concurrency group now (src/schedule/groups.ts), across every
-- instance on this file: one row per group while its lease is held; lease_until is milliseconds
-- since the Unix epoch, renewed while the call runs, and a lease past it is taken over.
CREATE TABLE group_leases (
  grp TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  lease_until INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 13,
    name: "limit usage",
    sql: `
-- The buckets of limits (src/limits/, store/limit-usage.ts): key names the limit and the values it
-- is counted per; level is what was used as of at (milliseconds since the Unix epoch). A bucket
-- drains at its limit's rate from then on, so a row is never needed to forget old use.
CREATE TABLE limit_usage (
  key TEXT PRIMARY KEY,
  level REAL NOT NULL CHECK (level >= 0),
  at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 14,
    name: "history facts",
    sql: `
-- The buckets of history facts (src/history/, store/history.ts): per fact (its name and a digest
-- of its definition), key (a digest of the values it is counted per, within a tenant) and bucket
-- (its start, milliseconds since the Unix epoch), how many entries counted, the sum of their
-- amounts and the latest (its time and decision id). Written in the transaction of the entry
-- that counts; a bucket past expires_at left every window and is pruned.
CREATE TABLE history_buckets (
  fact TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL CHECK (count >= 0),
  total REAL NOT NULL,
  last_at INTEGER NOT NULL,
  last_decision TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (fact, key_hash, bucket)
) STRICT, WITHOUT ROWID;
CREATE INDEX history_buckets_expires_at ON history_buckets (expires_at);
`,
  },
  {
    version: 15,
    name: "mcp sessions",
    sql: `
-- Sessions of 2025-11-25 MCP clients on /mcp (src/mcp/sessions.ts, store/mcp-sessions.ts), when
-- mcp.sessions is on: the id's SHA-256 (id_hash; the id itself is the client's), who opened it
-- (a token of the same tenant and subject is required with it), the protocol revision and the
-- client capabilities it declared (JSON); times in milliseconds since the Unix epoch, expires_at
-- the expiry of the token that opened it. The resources it subscribed, and the SSE events of its
-- streams (kept for resumption with Last-Event-ID: seq is the event id, stream the SSE stream it
-- was sent on, message the JSON-RPC message, '' for a priming event), expire with it.
CREATE TABLE mcp_sessions (
  id_hash TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  subject TEXT NOT NULL,
  protocol_version TEXT NOT NULL,
  capabilities TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX mcp_sessions_expires_at ON mcp_sessions (expires_at);
CREATE TABLE mcp_session_subscriptions (
  id_hash TEXT NOT NULL,
  uri TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (id_hash, uri)
) STRICT, WITHOUT ROWID;
CREATE TABLE mcp_session_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id_hash TEXT NOT NULL,
  stream TEXT NOT NULL,
  message TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX mcp_session_events_stream ON mcp_session_events (id_hash, stream, seq);
CREATE INDEX mcp_session_events_expires_at ON mcp_session_events (expires_at);
`,
  },
  {
    version: 16,
    name: "mcp tasks",
    sql: `
-- The tasks of the MCP tasks extension on /mcp (src/mcp/tasks.ts, store/mcp-tasks.ts): one row per
-- task, bound to the tenant and subject (owner) whose tools/call it is. status is the extension's;
-- call is the call's name and arguments (JSON), approval_id the approval it waits for, input_key
-- the input request outstanding, result the CallToolResult and error the JSON-RPC error (JSON),
-- runner who runs the call once claimed. Times in milliseconds since the Unix epoch; a row is
-- forgotten past expires_at.
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
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX mcp_tasks_expires_at ON mcp_tasks (expires_at);
`,
  },
  {
    version: 17,
    name: "history writers",
    sql: `
-- The writers of history buckets (store/sqlite-history.ts): one row per store connection that
-- wrote some (writer: a random id per open store), its version the one the transaction that
-- last wrote them took: one more than the highest version of every writer, so a write of any
-- writer leaves a version never seen before. A store keeps the buckets it read in memory while
-- no other writer's version moved; rows of writers idle for a day are pruned (never the highest).
CREATE TABLE history_writers (
  writer TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
];
