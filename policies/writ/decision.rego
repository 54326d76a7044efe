# Writ's sample decision policy: the repository-repair demo of the seed chapter.
#
# Input and output follow DESIGN section 4 (the input is described by policies/input.schema.json).
# Every rule that can refuse adds a reason to `denials`; the decision is a denial when there is
# any, otherwise an approval request for committing actions nobody has approved yet, otherwise
# an allow with a short, single-use grant.
package writ

# OPA's improved negation: `not args.path in workspace.edit_paths` holds when the workspace lists
# no edit_paths at all, so a refusal guarded by `not` cannot fall silent on a missing value.
# Without it, OPA evaluates the refs of a negated expression first, and the rule would be
# undefined instead: no denial.
import future.keywords.not

# Actions this policy governs, with what they do to a workspace.
repo_actions := {
	"repo.search": "read",
	"repo.read": "read",
	"repo.propose_edit": "propose",
	"repo.apply_edit": "apply",
	"repo.finish": "finish",
}

# The payments demo: drafts are reversible, committing a payment needs a treasurer.
payment_actions := {
	"create_payment_draft": "draft",
	"commit_payment": "commit",
}

# Code Mode: running a program (its own decision; every call the program makes is decided again,
# with input.context.run naming the run). The policy sees the program's digest and size only.
code_actions := {"code.run": "run"}

# MCP tasks (the tasks extension on /mcp): reading, answering and cancelling a task. The resource
# is the task (type mcp.task), owned by the subject and tenant whose call it is: only they may.
task_actions := {
	"mcp.tasks.get": "task",
	"mcp.tasks.update": "task",
	"mcp.tasks.cancel": "task",
}

# An MCP server's requests to the client while one of its tools runs (sampling, elicitation,
# roots): Writ forwards one only to the caller of that call, so it is allowed when that call is
# an action this policy governs (input.action.args.tool; args.server is the server asking,
# args.params the request, which the decision log redacts like any input).
client_request_actions := {"mcp.sampling": "ask", "mcp.elicitation": "ask", "mcp.roots": "ask"}

# Who may run programs at all: the demo's developers (and only in their own tenant's workspaces,
# which the checks of each call inside the run enforce).
code_runner_roles := {"developer"}

# The longest program a run accepts, in bytes.
max_program_bytes := 16384

# OAuth scopes a caller's token must carry for an action (step-up): an agent's delegated token
# commits a payment only when its user granted both. Discovery still shows the tool; a call
# without them is denied with required_scopes, which Writ answers with a 403 and
# WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope listed here>".
action_scopes := {"commit_payment": ["payments:write", "payments:commit"]}

# Drafts by anyone but a treasurer carry a ceiling on the amount.
draft_ceiling := 100

# Roles whose holders may approve a call that needs approval.
approver_roles := ["maintainer"] if kind == "apply"

approver_roles := ["treasurer"] if kind == "commit"

default decision := {
	"decision": "deny",
	"reasons": [{
		"code": "no_rule_allows",
		"message": "no policy rule allows this action",
		"visible_to_model": true,
	}],
}

decision := object.union({"decision": "deny", "reasons": sorted_denials}, scope_challenge) if {
	count(denials) > 0
} else := {
	"decision": "require_approval",
	"reasons": [{
		"code": "approval_required",
		"message": sprintf("this call needs the approval of a %s", [concat(" or ", approver_roles)]),
		"visible_to_model": true,
	}],
	"approval": {"approver_roles": approver_roles, "ttl_seconds": 900},
} if {
	needs_approval
	not approved
} else := {
	"decision": "allow_with_conditions",
	"reasons": [{
		"code": "amount_capped",
		"message": sprintf("drafts are limited to %d without the treasurer role", [draft_ceiling]),
		"visible_to_model": true,
	}],
	"conditions": [{"type": "max_value", "path": "/amount", "max": draft_ceiling}],
	"grant": {"ttl_seconds": 60, "max_uses": 1},
} if {
	kind == "draft"
	not "treasurer" in input.subject.roles
} else := {
	"decision": "allow",
	"reasons": [],
	"grant": {"ttl_seconds": 60, "max_uses": 1},
} if {
	kind
}

# Sets iterate in sorted order, and reasons sort by their code first.
sorted_denials := [r | some r in denials]

kind := repo_actions[input.action.name]

kind := payment_actions[input.action.name]

kind := code_actions[input.action.name]

kind := task_actions[input.action.name]

kind := client_request_actions[input.action.name]

governed(name) if repo_actions[name]

governed(name) if payment_actions[name]

# Checks of the workspace or account a call touches (payment drafts live in the payments service).
resource_checked if {
	kind
	not kind in {"commit", "run", "ask"}
	not discovering
}

args := object.get(input.action, "args", {})

workspace := input.resource.attributes

discovering if input.context.phase == "discover"

# ---------------------------------------------------------------------------------------------
# Refusals

denials contains reason("unknown_action", sprintf("this policy does not govern %s", [input.action.name])) if {
	not kind
}

denials contains reason("unknown_resource", sprintf("the %s does not exist", [input.resource.type])) if {
	resource_checked
	not input.resource.known
}

# Another subject's workspace is refused even when its id is known; the model is not told whose.
denials contains hidden_reason("not_owner", sprintf("%s %s belongs to another subject", [input.resource.type, input.resource.id])) if {
	resource_checked
	input.resource.known
	input.resource.owner != input.subject.id
}

denials contains hidden_reason("wrong_tenant", sprintf("the %s belongs to another tenant", [input.resource.type])) if {
	resource_checked
	input.resource.known
	input.resource.tenant != input.subject.tenant
}

# Paths are compared as strings, exactly (and could be by prefix) because the contracts declare
# them `format: path` (src/config/writ.default.yaml): Writ hands the policy a path in normal form,
# relative to the workspace's top folder — no ".", "..", "//", trailing "/" or percent-encoding,
# Unicode NFC — and refuses one that climbs out of it before the policy runs. So "./src//sum.ts"
# arrives as "src/sum.ts", and "src/../.env" as ".env", which the lists below do not hold.
# Without that declaration, a rule such as startswith(args.path, "src/") would allow "src/../.env".
denials contains reason("path_not_readable", sprintf("%s is outside the workspace's readable paths", [args.path])) if {
	kind == "read"
	not discovering
	args.path
	not args.path in workspace.read_paths
}

denials contains reason("path_not_editable", sprintf("%s is outside the workspace's editable paths", [args.path])) if {
	kind in {"propose", "apply"}
	not discovering
	not args.path in workspace.edit_paths
}

denials contains reason("unread_base", sprintf("read %s before editing it: its base hash was never read in this workspace", [args.path])) if {
	kind in {"propose", "apply"}
	not discovering
	not args.base_hash in object.get(workspace, ["reads", args.path], [])
}

denials contains reason("stale_revision", sprintf("%s changed since it was read: read it again and redo the edit", [args.path])) if {
	kind in {"propose", "apply"}
	not discovering
	args.base_hash in object.get(workspace, ["reads", args.path], [])
	args.base_hash != workspace.files[args.path]
}

# Read before edit, in this session: the configuration's history fact reads_of_path counts this
# session's allowed reads of the file (src/config/writ.default.yaml, `history:`). The fact is
# present only when it is configured and the call has a session; without it this rule is silent.
denials contains reason("read_first", sprintf("read %s in this session before proposing an edit of it", [args.path])) if {
	kind == "propose"
	not discovering
	input.context.history.reads_of_path.count == 0
}

denials contains reason("duplicate_proposal", sprintf("an edit of %s was already proposed in this workspace", [args.path])) if {
	kind == "propose"
	not discovering
	args.path in object.get(workspace, "proposals", [])
}

denials contains reason("code_mode_not_allowed", "running programs needs the developer role") if {
	kind == "run"
	count({r | some r in input.subject.roles; r in code_runner_roles}) == 0
}

denials contains reason("program_too_large", sprintf("the program is %d bytes; runs take at most %d", [args.code_bytes, max_program_bytes])) if {
	kind == "run"
	not discovering
	args.code_bytes > max_program_bytes
}

denials contains reason("unknown_call", sprintf("%s asks during %s, which this policy does not govern", [input.action.name, args.tool])) if {
	kind == "ask"
	not governed(args.tool)
}

denials contains reason("insufficient_scope", sprintf("%s needs a token with the scopes %s", [input.action.name, concat(" ", action_scopes[input.action.name])])) if {
	not discovering
	some scope in action_scopes[input.action.name]
	not scope in input.subject.scopes
}

# A denial for want of scopes only (no other refusal) challenges the caller to get them: every
# scope the action needs, not only the missing ones.
scope_challenge := {"required_scopes": action_scopes[input.action.name]} if {
	count(denials) > 0
	count({r | some r in denials; r.code != "insufficient_scope"}) == 0
} else := {}

reason(code, message) := {"code": code, "message": message, "visible_to_model": true}

hidden_reason(code, message) := {"code": code, "message": message, "visible_to_model": false}

# ---------------------------------------------------------------------------------------------
# Approvals

needs_approval if {
	kind in {"apply", "commit"}
	not discovering
}

# An approval counts when an approver with one of the roles, other than the requester, gave it.
approved if {
	approval := input.context.approval
	approval.approver.id != input.subject.id
	some role in approval.approver.roles
	role in approver_roles
}
