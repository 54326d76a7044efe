package example.rules

default allow := false

allow = true if input.admin

allow if { input.owner == input.user }

p := 1
q := 2
r if true

t := 3

same_row[x] := y if {
	some x, y in input.pairs
}

names contains name if {
	some name in input.names
}

f(x) = y if {
	y := x * 2
}
else = 0

g(x) := "big" if {
	x > 10
} else := "small" if {
	x < 2
} else := "medium"

h(x) := 1 if x > 0
else := 2
