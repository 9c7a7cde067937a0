package reconcile

import "testing"

func TestConfirm(t *testing.T) {
	cases := []struct {
		toRun         int
		terminal, yes bool
		want          bool
	}{
		{699, true, false, true},
		{ConfirmAbove + 1, true, false, true},
		{ConfirmAbove, true, false, false},
		{5, true, false, false},
		{699, true, true, false},   // --yes
		{699, false, false, false}, // a script: nobody to answer
		{699, false, true, false},
	}
	for _, c := range cases {
		if got := Confirm(c.toRun, c.terminal, c.yes); got != c.want {
			t.Errorf("Confirm(%d, terminal=%v, yes=%v) = %v, want %v", c.toRun, c.terminal, c.yes, got, c.want)
		}
	}
}
