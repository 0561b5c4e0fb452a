package human

import "testing"

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0 errors"}, {1, "1 error"}, {2, "2 errors"}}
	for _, tt := range tests {
		if got := Plural(tt.n, "error"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {1500, "1.5 kB"},
		{999_949, "999.9 kB"}, {1_000_000, "1.0 MB"}, {42_000_000, "42.0 MB"},
		{1_000_000_000, "1.00 GB"}, {2_400_000_000, "2.40 GB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
