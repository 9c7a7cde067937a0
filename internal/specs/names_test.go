package specs

import "testing"

func TestNamesClaim(t *testing.T) {
	var n Names
	cases := []struct {
		path, kind, id string
		dup            bool
	}{
		{"a/orders.json", "Pipeline", "orders", false},
		{"a/orders.json", "Pipeline", "orders", false}, // the same file again (a task names it)
		{"a/orders.yaml", "Pipeline", "orders", true},  // its twin in the folder
		{"a/orders_wf.json", "Workflow", "orders", false},
		{"b/orders.yaml", "Pipeline", "orders", false}, // another folder, another ledger
		{"a/x.json", "Pipeline", "", false},
	}
	for _, c := range cases {
		p := n.Claim(c.path, c.kind, c.id, 1, 1)
		if (p != nil) != c.dup {
			t.Errorf("Claim(%s, %s, %s) = %v, want duplicate %t", c.path, c.kind, c.id, p, c.dup)
		}
		if p != nil && p.File != c.path {
			t.Errorf("the duplicate is reported on %s, want %s", p.File, c.path)
		}
	}
}
