package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseWatchFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    watchPlan
		wantErr bool
	}{
		{nil, watchPlan{edits: 20, sizes: []int{1000, 10000}}, false},
		{[]string{"-edits", "3", "-sizes", "200, 500", "-feedgen", "/bin/feedgen", "-dir", "/tmp/x"},
			watchPlan{feedgen: "/bin/feedgen", dir: "/tmp/x", edits: 3, sizes: []int{200, 500}}, false},
		{[]string{"-layout", "chunks", "-sizes", "20000"}, watchPlan{edits: 20, sizes: []int{20000}, chunks: true}, false},
		{[]string{"-layout", "tiles"}, watchPlan{}, true},
		{[]string{"-sizes", "100,x"}, watchPlan{}, true},
		{[]string{"-sizes", "0"}, watchPlan{}, true},
		{[]string{"extra"}, watchPlan{}, true},
		{[]string{"-quick"}, watchPlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseWatchFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
	var stderr bytes.Buffer
	if _, err := parseWatchFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(stderr.String(), "go run ./tools/feedbench watch") {
		t.Errorf("-h: no example in %q", stderr.String())
	}
}
