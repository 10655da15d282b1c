// Command knobs calls each test-cost knob in a program go build links,
// and prints what each did: TestKnobsRefuseOutsideTests runs it.
package main

import (
	"fmt"

	"github.com/phc-project/phc/internal/identity"
	"github.com/phc-project/phc/internal/testbinary"
	"github.com/phc-project/phc/internal/vault"
)

func main() {
	fmt.Printf("Running: %v\n", testbinary.Running())
	for _, knob := range []struct {
		name string
		f    func()
	}{{"UseTestKDF", vault.UseTestKDF}, {"UseTestHashCost", identity.UseTestHashCost}} {
		func() {
			defer func() { fmt.Printf("%s: %v\n", knob.name, recover()) }()
			knob.f()
		}()
	}
}
