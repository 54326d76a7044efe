package example.expressions

import rego.v1
import future.keywords.in

every_item if {
	every x in input.items {
		x > 0
	}
	every k, v in input.object { k != v }
}

some_in if {
	some x in input.items
	some i, y in input.list
	x == y
	i > 0
}

withs if {
	allow with input as {"user": "a"}
		with data.roles as []
	allow with input.user as "b" with input.admin as true
}

strings if {
	input.a == `raw \n string`
	input.b == "escaped \"quote\" and \u00e9"
	input.c == 1.50
	input.d == 1e3
	input.e == -0.5
}

negation if {
	not input.blocked
	x := input.count
	not x == 3
}

allow if true
