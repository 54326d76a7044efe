# METADATA
# title: Example
# description: A package with metadata.
package example.metadata

# METADATA
# title: allow
# description: The decision.
# METADATA
# scope: rule
allow if input.ok

# METADATA
# entrypoint: true
deny := false
