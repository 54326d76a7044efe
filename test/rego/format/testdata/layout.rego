package example.layout

x := [1, 2,
  3]

y := {
  "a": 1, "b": 2,
  "c": 3}

z := f(1,
	2)

s := {1,2,3}

compr := [v | some v in input.items; v > 1]

compr_lines := [v |
  some v in input.items
  v > 1
]

obj_compr := {k: v | some k, v in input.object}

nested := 1 + 2 * 3

nested_left := (1 + 2) * 3

quoted := {"a b": input["a b"], "c": input.c, "d": data.x["y"]}

f(a, b) := a + b
