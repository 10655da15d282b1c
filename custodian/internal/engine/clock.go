package engine

import (
	"time"
)

// Clock tells the time; tests pass a fake.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC() }
