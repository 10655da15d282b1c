package humanfmt

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{500 * time.Millisecond, "0s"},
		{45 * time.Second, "45s"},
		{30 * time.Minute, "30m"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{24 * time.Hour, "1d"},
		{51 * time.Hour, "2d3h"},
		{8760 * time.Hour, "365d"},
		{time.Hour + time.Second, "1h1s"},
		{-30 * time.Minute, "-30m"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := Seconds(1800); got != "30m" {
		t.Errorf("Seconds(1800) = %q", got)
	}
}

func TestTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	if got := Time(time.Date(2026, 12, 3, 15, 5, 9, 7, paris)); got != "2026-12-03 14:05:09 UTC" {
		t.Errorf("Time = %q", got)
	}
	if got := Time(time.Time{}); got != "never" {
		t.Errorf("Time(zero) = %q", got)
	}
}
