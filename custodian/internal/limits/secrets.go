package limits

import "time"

// maxNameKey bounds the name part of a Secrets key: no consumer's name is
// longer, so a longer one names nobody and counts as one.
const maxNameKey = 64

// Secrets limits wrong secrets per source (a connection, [Source.Conn]):
// a source that gave limit wrong secrets under one name within a window,
// or ten times that under any names, waits until the oldest leaves the
// window. Nobody else waits: wrong secrets sent under an app's name never
// refuse the app's own, which comes over a connection of its own and is
// checked whatever others sent.
//
// A process that reconnects for every attempt is not slowed by the count;
// what bounds it is the hashing each check costs, which the caller runs a
// few at a time.
type Secrets struct {
	byName *Failures
	all    *Failures
}

// NewSecrets returns a Secrets allowing limit wrong secrets per source and
// name within window.
func NewSecrets(limit int, window time.Duration) *Secrets {
	return &Secrets{byName: NewFailures(limit, window), all: NewFailures(10*limit, window)}
}

// Wait returns how long src must wait at now before its next secret for
// name is checked (0: check it).
func (s *Secrets) Wait(src Source, name string, now time.Time) time.Duration {
	return max(s.byName.Wait(nameKey(src, name), now), s.all.Wait(src.Conn(), now))
}

// Note records a wrong secret from src for name at now.
func (s *Secrets) Note(src Source, name string, now time.Time) {
	s.byName.Note(nameKey(src, name), now)
	s.all.Note(src.Conn(), now)
}

func nameKey(src Source, name string) string {
	if len(name) > maxNameKey {
		name = "\x00long"
	}
	return src.Conn() + "\x00" + name
}
