// Command feedgen builds a static, pre-rendered JSON feed of articles and
// serves it. Run "feedgen --help" for the commands.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
