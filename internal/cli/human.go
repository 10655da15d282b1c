package cli

import (
	"flag"
	"time"

	"github.com/phc-project/phc/internal/humanfmt"
)

// humanExpiry is t as humanfmt.Time writes it, followed by how long from
// now, "(in 1h)".
func humanExpiry(t, now time.Time) string {
	// To the second within the hour, to the minute within the day, to
	// the hour beyond.
	d := t.Sub(now)
	switch {
	case d >= 24*time.Hour:
		d = d.Round(time.Hour)
	case d >= time.Hour:
		d = d.Round(time.Minute)
	default:
		d = d.Round(time.Second)
	}
	if d >= time.Second {
		return humanfmt.Time(t) + " (in " + humanfmt.Duration(d) + ")"
	}
	return humanfmt.Time(t)
}

// durationValue is a flag.Value for a duration whose help shows its
// default as phc writes durations ("30m", not Go's "30m0s").
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return humanfmt.Duration(*v.d)
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// durationFlag defines a duration flag on fs, as fs.Duration does.
func durationFlag(fs *flag.FlagSet, name string, def time.Duration, usage string) *time.Duration {
	d := def
	fs.Var(durationValue{&d}, name, usage)
	return &d
}
