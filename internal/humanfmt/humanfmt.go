// Package humanfmt writes durations and times for people, one way
// everywhere the CLI and the console show them: durations in their largest
// whole units ("30m", "1h", "1h30m", "2d", "2d3h", "45s"), and times in UTC
// with the zone written out ("2026-12-03 14:05:09 UTC").
//
// Wire formats are not people's: the API keeps RFC 3339 times and seconds,
// and PCP's audit lines keep their own ("30min").
package humanfmt

import (
	"strconv"
	"strings"
	"time"
)

// Duration writes d in days, hours, minutes and seconds, largest first,
// leaving out the units that are zero: 90*time.Minute is "1h30m",
// 48*time.Hour "2d". Parts below a second are dropped; zero is "0s", and a
// negative duration is written with a leading "-".
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	secs := int64(d / time.Second)
	if secs == 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		n    int64
		name string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		if q := secs / u.n; q > 0 {
			b.WriteString(strconv.FormatInt(q, 10))
			b.WriteString(u.name)
			secs -= q * u.n
		}
	}
	return b.String()
}

// Seconds is Duration of a count of seconds.
func Seconds(s int64) string { return Duration(time.Duration(s) * time.Second) }

// TimeLayout is the layout of Time.
const TimeLayout = "2006-01-02 15:04:05 MST"

// Time writes t in UTC, to the second, with its zone: "2026-12-03 14:05:09
// UTC". The zero time is "never".
func Time(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(TimeLayout)
}
