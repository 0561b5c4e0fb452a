package main

import (
	"fmt"
	"time"
)

// stopTest is the command feedgen-stop-test of the tests (see TestMain):
// it stops on a signal as feedgen does (stopOnSignal), then never
// returns, as a command stuck where it cannot see its context would.
func stopTest() {
	ctx, stop := stopOnSignal()
	defer stop()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("stopping")
	time.Sleep(time.Hour)
}
