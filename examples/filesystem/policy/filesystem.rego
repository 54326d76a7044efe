# Who may do what with the files the filesystem server serves (examples/filesystem/writ.yaml).
#
# Viewers and editors read, list and search the served folder, but not dot-files (.env, .git/)
# nor anything outside it. Editors write files once a maintainer (someone else) approves.
package writ

import rego.v1

reads := {"fs.read_text_file", "fs.list_directory", "fs.search_files"}

default decision := {"decision": "deny", "reasons": [{
	"code": "no_rule_allows",
	"message": "no policy rule allows this action",
	"visible_to_model": true,
}]}

decision := refuse("hidden_path", sprintf("%s is not in the shared folder, or is a dot-file", [path])) if {
	outside_or_hidden
} else := allow_once if {
	input.action.name in reads
	some role in input.subject.roles
	role in {"viewer", "editor"}
} else := refuse("editors_only", "only editors write files") if {
	input.action.name == "fs.write_file"
	not "editor" in input.subject.roles
} else := allow_once if {
	input.action.name == "fs.write_file"
	approval := input.context.approval
	approval.approver.id != input.subject.id
	"maintainer" in approval.approver.roles
} else := {
	"decision": "require_approval",
	"reasons": [{"code": "approval_required", "message": "writing a file needs a maintainer's approval", "visible_to_model": true}],
	"approval": {"approver_roles": ["maintainer"], "ttl_seconds": 900},
} if {
	input.action.name == "fs.write_file"
}

allow_once := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}}

refuse(code, message) := {"decision": "deny", "reasons": [{"code": code, "message": message, "visible_to_model": true}]}

# Paths are relative to the served folder, as the model sees it: no "/" or "~" at the start, and
# no part that starts with a dot (which rules out "..", ".env" and ".git/config"; "." is the folder).
path := input.action.args.path

outside_or_hidden if startswith(path, "/")

outside_or_hidden if startswith(path, "~")

outside_or_hidden if {
	some part in split(path, "/")
	startswith(part, ".")
	part != "."
}
