// Command logtool inspects, repairs and converts Apache Kafka log
// directories offline.
package main

import (
	"os"

	"github.com/logtool/logtool/commands"
)

func main() {
	os.Exit(commands.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
