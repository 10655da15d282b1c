// Command phc is the Portable Human Context custodian: a daemon
// (`phc serve`) and its command-line client. See the README.
package main

import (
	"os"

	"github.com/phc-project/phc/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
