package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
)

func main() {
	opts, err := isolated.ChildOptionsFromEnv()
	if err == nil {
		err = isolated.ServeChild(context.Background(), os.Stdin, os.Stdout, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sms-sandbox:", err)
		os.Exit(1)
	}
}
