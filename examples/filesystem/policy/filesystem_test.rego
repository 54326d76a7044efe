package writ_test

import rego.v1

import data.writ

viewer := {"id": "vic", "tenant": "demo", "roles": ["viewer"]}

editor := {"id": "eda", "tenant": "demo", "roles": ["editor"]}

call(name, args, subject) := {"action": {"name": name, "args": args}, "subject": subject, "context": {}}

test_viewer_reads_a_file if {
	writ.decision.decision == "allow" with input as call("fs.read_text_file", {"path": "notes.md"}, viewer)
}

test_viewer_lists_the_folder if {
	writ.decision.decision == "allow" with input as call("fs.list_directory", {"path": "."}, viewer)
}

test_nobody_reads_dot_files if {
	every path in [".env", "sub/.env", ".git/config", "../secrets.txt", "/etc/passwd", "~/.ssh/id_ed25519"] {
		writ.decision.reasons[0].code == "hidden_path" with input as call("fs.read_text_file", {"path": path}, editor)
	}
}

test_viewer_cannot_write if {
	writ.decision.reasons[0].code == "editors_only" with input as call("fs.write_file", {"path": "a.txt", "content": "x"}, viewer)
}

test_editor_writes_after_a_maintainer_approves if {
	args := {"path": "a.txt", "content": "x"}
	writ.decision.decision == "require_approval" with input as call("fs.write_file", args, editor)
	approved := object.union(call("fs.write_file", args, editor), {"context": {"approval": {"approver": {"id": "mia", "roles": ["maintainer"]}}}})
	writ.decision.decision == "allow" with input as approved
	self := object.union(call("fs.write_file", args, editor), {"context": {"approval": {"approver": {"id": "eda", "roles": ["maintainer"]}}}})
	writ.decision.decision == "require_approval" with input as self
}
