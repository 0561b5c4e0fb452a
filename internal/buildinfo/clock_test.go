package buildinfo

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Time // zero: the clock
		err  string
	}{
		{env: ""},
		{env: "1796083200", want: time.Unix(1796083200, 0).UTC()},
		{env: "0", want: time.Unix(0, 0).UTC()},
		{env: "1796083200.5", err: `SOURCE_DATE_EPOCH="1796083200.5" is not a whole number of seconds since 1970`},
		{env: "soon", err: `SOURCE_DATE_EPOCH="soon" is not a whole number of seconds since 1970`},
	} {
		now, err := Clock(func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return tc.env
			}
			return ""
		})
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.env, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.env, err)
		case tc.want.IsZero():
			if d := time.Since(now()); d < 0 || d > time.Minute {
				t.Errorf("%q: the clock says %v", tc.env, now())
			}
		case !now().Equal(tc.want) || now().Location() != time.UTC:
			t.Errorf("%q: %v, want %v", tc.env, now(), tc.want)
		}
	}
}
