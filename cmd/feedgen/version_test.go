package main

import "testing"

func TestPseudoVersion(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"v0.0.0-20261123170000-0123456789ab", true},
		{"v0.0.0-20261123170000-0123456789ab+dirty", true},
		{"v1.2.4-0.20261123170000-0123456789ab", true},
		{"v1.2.4-pre.0.20261123170000-0123456789ab", true},
		{"v1.2.3", false},
		{"v1.2.3-rc.1", false},
		{"v1.2.3+incompatible", false},
		{"v0.0.0-2026112317000-0123456789ab", false},
		{"v0.0.0-20261123170000-0123456789AB", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := pseudoVersion(tt.v); got != tt.want {
			t.Errorf("pseudoVersion(%q) = %t, want %t", tt.v, got, tt.want)
		}
	}
}
