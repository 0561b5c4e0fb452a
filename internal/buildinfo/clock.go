package buildinfo

import (
	"fmt"
	"strconv"
	"time"
)

// Clock returns the clock a build reads its time from: SOURCE_DATE_EPOCH
// when getenv says it is set (reproducible builds), else time.Now. A
// SOURCE_DATE_EPOCH that is not a whole number of seconds is an error.
func Clock(getenv func(string) string) (func() time.Time, error) {
	s := getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Now, nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a whole number of seconds since 1970", s)
	}
	t := time.Unix(sec, 0).UTC()
	return func() time.Time { return t }, nil
}
