package kernelcmd

import "github.com/sms-baseline/sms/kernelcmd/kernelconfig"

// Config is everything `manager kernel` is told on its command line
// (kernelconfig.Config).
type Config = kernelconfig.Config

// Model chooses the chat agent's model (kernelconfig.Model).
type Model = kernelconfig.Model

// Agent configures the chat agent (kernelconfig.Agent).
type Agent = kernelconfig.Agent

// Defaults are the flag defaults of `manager kernel`.
var Defaults = kernelconfig.Defaults
