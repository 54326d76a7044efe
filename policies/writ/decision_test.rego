package writ_test

import rego.v1

import data.writ

readme_hash := "9a0364b9e99bb480dd25e1f0284c8555"

sum_hash := "5d41402abc4b2a76b9719d911017c592"

workspace := {
	"type": "workspace",
	"id": "ws-demo",
	"known": true,
	"owner": "alice",
	"tenant": "demo",
	"revision": "3",
	"attributes": {
		"read_paths": ["README.md", "src/sum.ts"],
		"edit_paths": ["src/sum.ts"],
		"files": {"README.md": readme_hash, "src/sum.ts": sum_hash},
		"reads": {"src/sum.ts": [sum_hash]},
		"proposals": [],
	},
}

alice := {"id": "alice", "tenant": "demo", "roles": [], "scopes": [], "issuer": "test", "claims": {}}

call(name, args) := {
	"subject": alice,
	"action": {"name": name, "version": "1", "args": args},
	"resource": workspace,
	"context": {"phase": "call", "source": "canonical"},
}

edit := {"workspace": "ws-demo", "path": "src/sum.ts", "base_hash": sum_hash, "before": "a - b", "after": "a + b"}

codes(d) := {r.code | some r in d.reasons}

test_read_inside_the_workspace_is_allowed if {
	d := writ.decision with input as call("repo.read", {"workspace": "ws-demo", "path": "README.md"})
	d.decision == "allow"
	d.grant.max_uses == 1
}

test_read_outside_the_read_paths_is_denied if {
	d := writ.decision with input as call("repo.read", {"workspace": "ws-demo", "path": ".env"})
	d.decision == "deny"
	codes(d) == {"path_not_readable"}
}

test_proposing_an_edit_of_a_read_file_is_allowed if {
	d := writ.decision with input as call("repo.propose_edit", edit)
	d.decision == "allow"
}

test_editing_outside_the_edit_paths_is_denied if {
	d := writ.decision with input as call("repo.propose_edit", object.union(edit, {"path": "README.md", "base_hash": readme_hash}))
	d.decision == "deny"
	"path_not_editable" in codes(d)
}

test_a_workspace_without_edit_paths_refuses_every_edit if {
	bare := json.patch(call("repo.propose_edit", edit), [{"op": "remove", "path": "/resource/attributes/edit_paths"}])
	d := writ.decision with input as bare
	d.decision == "deny"
	"path_not_editable" in codes(d)
}

test_an_edit_needs_a_base_hash_the_workspace_has_read if {
	d := writ.decision with input as call("repo.propose_edit", object.union(edit, {"base_hash": "feedface"}))
	codes(d) == {"unread_base"}
}

test_an_edit_of_a_file_changed_since_it_was_read_is_stale if {
	files := {"README.md": readme_hash, "src/sum.ts": "0ddba11"}
	changed := object.union(workspace, {"attributes": object.union(workspace.attributes, {"files": files})})
	d := writ.decision with input as object.union(call("repo.propose_edit", edit), {"resource": changed})
	codes(d) == {"stale_revision"}
}

test_only_one_proposal_per_file if {
	proposed := object.union(workspace, {"attributes": object.union(workspace.attributes, {"proposals": ["src/sum.ts"]})})
	d := writ.decision with input as object.union(call("repo.propose_edit", edit), {"resource": proposed})
	codes(d) == {"duplicate_proposal"}
}

test_another_subjects_workspace_is_denied_without_telling_the_model_whose if {
	mallory := object.union(alice, {"id": "mallory"})
	d := writ.decision with input as object.union(call("repo.read", {"workspace": "ws-demo", "path": "README.md"}), {"subject": mallory})
	d.decision == "deny"
	some r in d.reasons
	r.code == "not_owner"
	r.visible_to_model == false
}

# Found by \`writ policy test --coverage\`: no test reached the tenant check.
test_another_tenants_workspace_is_denied_without_telling_the_model if {
	outsider := object.union(alice, {"tenant": "other"})
	d := writ.decision with input as object.union(call("repo.read", {"workspace": "ws-demo", "path": "README.md"}), {"subject": outsider})
	d.decision == "deny"
	some r in d.reasons
	r.code == "wrong_tenant"
	r.visible_to_model == false
}

test_an_unknown_workspace_is_denied if {
	unknown := {"type": "workspace", "id": "ws-nope", "known": false}
	d := writ.decision with input as object.union(call("repo.read", {"workspace": "ws-nope", "path": "README.md"}), {"resource": unknown})
	codes(d) == {"unknown_resource"}
}

test_applying_an_edit_needs_a_maintainers_approval if {
	d := writ.decision with input as call("repo.apply_edit", edit)
	d.decision == "require_approval"
	d.approval.approver_roles == ["maintainer"]
}

test_an_approved_edit_is_allowed if {
	approval := {"id": "ap-1", "approver": {"id": "carol", "roles": ["maintainer"]}, "at_ns": 1}
	req := call("repo.apply_edit", edit)
	d := writ.decision with input as object.union(req, {"context": object.union(req.context, {"approval": approval})})
	d.decision == "allow"
}

test_self_approval_does_not_count if {
	approval := {"id": "ap-1", "approver": {"id": "alice", "roles": ["maintainer"]}, "at_ns": 1}
	req := call("repo.apply_edit", edit)
	d := writ.decision with input as object.union(req, {"context": object.union(req.context, {"approval": approval})})
	d.decision == "require_approval"
}

test_tools_this_policy_does_not_govern_are_denied if {
	d := writ.decision with input as call("shell", {"cmd": "cat .env"})
	codes(d) == {"unknown_action"}
}

test_discovery_lists_the_repository_tools if {
	discover := object.union(call("repo.apply_edit", {}), {"context": {"phase": "discover", "source": "canonical"}, "resource": {"known": false}})
	d := writ.decision with input as discover
	d.decision == "allow"
}

account := {"type": "payment_account", "id": "acct-alice", "known": true, "owner": "alice", "tenant": "demo", "revision": "1", "attributes": {}}

draft_call(subject) := {
	"subject": subject,
	"action": {"name": "create_payment_draft", "version": "1", "args": {"account": "acct-alice", "amount": 40, "currency": "EUR"}},
	"resource": account,
	"context": {"phase": "call", "source": "canonical"},
}

test_a_draft_by_an_ordinary_user_is_capped if {
	d := writ.decision with input as draft_call(alice)
	d.decision == "allow_with_conditions"
	d.conditions == [{"type": "max_value", "path": "/amount", "max": 100}]
}

test_a_treasurer_drafts_without_a_cap if {
	d := writ.decision with input as draft_call(object.union(alice, {"roles": ["treasurer"]}))
	d.decision == "allow"
}

test_a_draft_on_another_subjects_account_is_denied if {
	d := writ.decision with input as draft_call(object.union(alice, {"id": "mallory"}))
	codes(d) == {"not_owner"}
}

payer := object.union(alice, {"scopes": ["payments:write", "payments:commit"]})

commit_call(subject, phase) := {
	"subject": subject,
	"action": {"name": "commit_payment", "version": "1", "args": {"draft": "drf_1"}},
	"resource": {"type": "payment_draft", "id": "drf_1", "known": false},
	"context": {"phase": phase, "source": "canonical"},
}

test_committing_a_payment_needs_a_treasurer if {
	commit := commit_call(payer, "call")
	d := writ.decision with input as commit
	d.decision == "require_approval"
	d.approval.approver_roles == ["treasurer"]
	approval := {"id": "ap-2", "approver": {"id": "tess", "roles": ["treasurer"]}, "at_ns": 1}
	approved := writ.decision with input as object.union(commit, {"context": object.union(commit.context, {"approval": approval})})
	approved.decision == "allow"
}

test_committing_a_payment_without_its_scopes_challenges_for_all_of_them if {
	partial := object.union(alice, {"scopes": ["payments:write"]})
	d := writ.decision with input as commit_call(partial, "call")
	d.decision == "deny"
	codes(d) == {"insufficient_scope"}
	d.required_scopes == ["payments:write", "payments:commit"]
}

test_a_token_without_the_scopes_still_sees_commit_payment if {
	d := writ.decision with input as commit_call(alice, "discover")
	d.decision != "deny"
}

test_another_refusal_besides_the_scopes_challenges_for_nothing if {
	other := {"code": "not_owner", "message": "x", "visible_to_model": false}
	scoped := {"code": "insufficient_scope", "message": "y", "visible_to_model": true}
	d := writ.decision with input as commit_call(alice, "call") with data.writ.denials as {other, scoped}
	d.decision == "deny"
	not d.required_scopes
}

# ---------------------------------------------------------------------------------------------
# Code Mode

developer := object.union(alice, {"roles": ["developer"]})

no_resource := {"type": "none", "id": "", "known": false, "attributes": {}}

run(subject, bytes, phase) := {
	"subject": subject,
	"action": {"name": "code.run", "version": "1", "args": {"code_sha256": sum_hash, "code_bytes": bytes}},
	"resource": no_resource,
	"context": {"phase": phase, "source": "canonical", "run": {"id": "r1", "decision_id": "d1"}},
}

test_a_developer_may_run_a_program if {
	d := writ.decision with input as run(developer, 200, "call")
	d.decision == "allow"
}

test_running_a_program_needs_the_developer_role if {
	d := writ.decision with input as run(alice, 200, "call")
	d.decision == "deny"
	codes(d) == {"code_mode_not_allowed"}
}

test_run_code_is_discoverable_for_developers_only if {
	shown := writ.decision with input as run(developer, 0, "discover")
	shown.decision == "allow"
	hidden := writ.decision with input as run(alice, 0, "discover")
	hidden.decision == "deny"
}

test_a_program_too_large_is_refused if {
	d := writ.decision with input as run(developer, 20000, "call")
	codes(d) == {"program_too_large"}
}

test_a_call_inside_a_run_is_decided_like_any_call if {
	inside := object.union(call("repo.read", {"workspace": "ws-demo", "path": ".env"}), {"context": {"run": {"id": "r1", "decision_id": "d1"}}})
	d := writ.decision with input as inside
	codes(d) == {"path_not_readable"}
}

task := {
	"type": "mcp.task",
	"id": "0b7e4c1e-5f7a-4d43-9a54-3f2d8e1c9a10",
	"known": true,
	"owner": "alice",
	"tenant": "demo",
	"attributes": {"status": "working", "tool": "repo.read"},
}

on_task(name, resource) := {
	"subject": alice,
	"action": {"name": name, "version": "1", "args": {"task_id": resource.id}},
	"resource": resource,
	"context": {"phase": "call", "source": "mcp"},
}

test_the_owner_may_get_update_and_cancel_their_task if {
	every name in {"mcp.tasks.get", "mcp.tasks.update", "mcp.tasks.cancel"} {
		d := writ.decision with input as on_task(name, task)
		d.decision == "allow"
	}
}

test_another_subjects_task_is_refused_without_saying_whose if {
	d := writ.decision with input as on_task("mcp.tasks.get", object.union(task, {"owner": "bob"}))
	d.decision == "deny"
	codes(d) == {"not_owner"}
	every r in d.reasons {
		not r.visible_to_model
	}
}

test_another_tenants_task_is_refused if {
	d := writ.decision with input as on_task("mcp.tasks.update", object.union(task, {"tenant": "other"}))
	d.decision == "deny"
	codes(d) == {"wrong_tenant"}
}

test_an_unknown_task_is_refused if {
	d := writ.decision with input as on_task("mcp.tasks.cancel", {"type": "mcp.task", "id": "nope", "known": false, "attributes": {}})
	d.decision == "deny"
	codes(d) == {"unknown_resource"}
}

# ---------------------------------------------------------------------------------------------
# An MCP server's requests to the caller of its running call

asked(name, tool) := {
	"subject": alice,
	"action": {"name": name, "version": "1", "args": {"server": "repo", "tool": tool, "params": {"maxTokens": 100}}},
	"resource": no_resource,
	"context": {"phase": "call", "source": "mcp"},
}

test_the_caller_of_a_governed_call_may_be_asked if {
	every name in {"mcp.sampling", "mcp.elicitation", "mcp.roots"} {
		d := writ.decision with input as asked(name, "repo.read")
		d.decision == "allow"
	}
	payment := writ.decision with input as asked("mcp.elicitation", "commit_payment")
	payment.decision == "allow"
}

test_a_request_during_a_call_this_policy_does_not_govern_is_refused if {
	d := writ.decision with input as asked("mcp.sampling", "other.tool")
	d.decision == "deny"
	codes(d) == {"unknown_call"}
}

# Read before edit (the history fact reads_of_path, when configured and the call has a session).
with_reads(c, n) := object.union(c, {"context": {"session": "s1", "history": {"reads_of_path": {"count": n}}}})

test_an_edit_unread_in_this_session_is_refused_read_first if {
	d := writ.decision with input as with_reads(call("repo.propose_edit", edit), 0)
	codes(d) == {"read_first"}
}

test_an_edit_read_in_this_session_is_allowed if {
	d := writ.decision with input as with_reads(call("repo.propose_edit", edit), 1)
	d.decision == "allow"
}

test_without_the_history_fact_read_first_is_silent if {
	d := writ.decision with input as call("repo.propose_edit", edit)
	not "read_first" in codes(d)
}

test_read_first_does_not_apply_to_reads if {
	d := writ.decision with input as with_reads(call("repo.read", {"workspace": "ws-demo", "path": "README.md"}), 0)
	d.decision == "allow"
}
