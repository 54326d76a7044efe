package example.comments

# A comment above the imports.
import data.lib.b # after an import
import data.lib.a

# Above a rule.
allow if {
    # Inside a body, above an expression.
    input.user == "admin" # at the end of an expression
      # indented oddly
    count(input.roles) > 0
}



# Several blank lines above this comment become one.
deny contains msg if {
	msg := "no" # trailing
}
# A comment at the end of the file.   
