package contracts

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sms-baseline/sms/kernel"
)

// The descriptors below live in ring 1 so that each driver package (ring
// 2) can describe itself, name, help, needs and constructor, in an
// exported Driver value, while the registry that chooses among them
// belongs to the composition root (ring 4), which registers the
// descriptors it links. Nothing is registered from an init function: a
// binary holds exactly the drivers its command names, in the order the
// command lists them, and tests build registries of their own.

// ModelSetting names a setting a model driver is opened with. Commands
// map each to their own flag (--model-name, --model-base-url, ...).
type ModelSetting string

// Model settings.
const (
	ModelName    ModelSetting = "name"
	ModelBaseURL ModelSetting = "base-url"
	ModelScript  ModelSetting = "script"
	// ModelEffort is how hard the model reasons (low, medium, high...).
	ModelEffort ModelSetting = "effort"
	// ModelThinkingBudget is the most tokens the model reasons with.
	ModelThinkingBudget ModelSetting = "thinking-budget"
)

// ModelNeed is a setting a model driver cannot open without.
type ModelNeed struct {
	// Setting must be non-empty.
	Setting ModelSetting
	// Hint says what to set it to, shown after the setting in the error;
	// it may be empty.
	Hint string
}

// ModelSettings are what a model driver is opened with.
type ModelSettings struct {
	// Name is the provider's model name.
	Name string
	// BaseURL overrides the provider's endpoint.
	BaseURL string
	// Key is the API key, read by the command from a file or from one of
	// the driver's KeyEnv variables; empty when none was found and the
	// key is optional.
	Key string
	// Script is the path of a script file (the scripted driver).
	Script string
	// Effort is how hard the model reasons, one of the driver's
	// Efforts; empty leaves it to the provider.
	Effort string
	// ThinkingBudget is the most tokens the model reasons with, for a
	// driver with ThinkingBudget; zero leaves it to the provider.
	ThinkingBudget int
	// AppName and SiteURL name the application to a provider that
	// attributes traffic (OpenRouter); empty sends none.
	AppName string
	SiteURL string
	// KeyFile is the path of the key file given, for a driver that reads
	// a credentials file of its own format (gpt-oauth's auth.json).
	KeyFile string
	// AllowUnofficial says the person running the kernel allowed an
	// unofficial driver (gpt-oauth).
	AllowUnofficial bool
}

// ModelDriver describes a model provider.
type ModelDriver struct {
	DriverInfo
	// Needs are the settings checked, in order, before Open runs.
	Needs []ModelNeed
	// KeyEnv lists the environment variables a key is read from, in
	// order, when no key file is given. Empty: the driver takes no key.
	KeyEnv []string
	// KeyOptional opens the driver without a key (a local server).
	KeyOptional bool
	// Efforts are the reasoning efforts the driver takes, in increasing
	// order; empty: it takes none.
	Efforts []string
	// ThinkingBudget says the driver takes a thinking budget.
	ThinkingBudget bool
	// SingleUser marks a driver for one person's own kernel only (it
	// spends that person's login): the operator never offers it to a
	// Tenant.
	SingleUser bool
	// Open builds the model. An error about one setting is a
	// *SettingError naming it.
	Open func(ModelSettings) (ModelService, error)
}

// Describe implements Describer.
func (d ModelDriver) Describe() DriverInfo { return d.DriverInfo }

// SettingError is a driver's error about one of its settings, so the
// command can name the flag that holds it.
type SettingError struct {
	// Setting is the setting at fault.
	Setting ModelSetting
	// Err is what is wrong with it.
	Err error
}

// Error names the setting and the fault.
func (e *SettingError) Error() string { return fmt.Sprintf("%s: %v", e.Setting, e.Err) }

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// ExecutorSettings are what an executor driver is opened with.
type ExecutorSettings struct {
	// Logger receives the executor's logs; nil discards them.
	Logger *slog.Logger
	// IdleAfter is how long an executor that runs each plugin in a
	// process of its own keeps an idle plugin's process: zero takes its
	// default, negative keeps it while the plugin is mounted. Others
	// ignore it.
	IdleAfter time.Duration
}

// ExecutorDriver describes where agent code runs.
type ExecutorDriver struct {
	DriverInfo
	// Open builds the executor.
	Open func(ExecutorSettings) (kernel.Executor, error)
}

// Describe implements Describer.
func (d ExecutorDriver) Describe() DriverInfo { return d.DriverInfo }

// StoreSettings are what a store driver is opened with.
type StoreSettings struct {
	// URL is the whole store spec, scheme included: sqlite:PATH,
	// postgres://...
	URL string
	// Schema is the tenant's schema, for drivers that have schemas.
	Schema string
}

// StoreDriver describes a store. Its Name and Aliases are the URL
// schemes it opens (the text before the first colon).
type StoreDriver struct {
	DriverInfo
	// Form is how a spec of this driver is written, as help shows it
	// ("sqlite:PATH", "a postgres:// URL").
	Form string
	// Open opens the store the settings name.
	Open func(context.Context, StoreSettings) (Store, error)
}

// Describe implements Describer.
func (d StoreDriver) Describe() DriverInfo { return d.DriverInfo }
