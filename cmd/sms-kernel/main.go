package main

import "github.com/sms-baseline/sms/kernelcmd"

func main() { kernelcmd.App{Name: "sms-kernel"}.Main() }
