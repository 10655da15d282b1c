package custodian

import "github.com/phc-project/phc/custodian/internal/engine"

// testHooks are where tests observe and steer a Service; every one is nil
// outside tests. They are set through Config (export_test.go), never by a
// package variable: two services in one process keep their own.
type testHooks struct {
	engine.Hooks
	// graphWait runs with the operation's name when useGraph has to wait.
	graphWait func(op string)
}
