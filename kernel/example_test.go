package kernel_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/kernel"
)

// The composition root defines vocabulary, installs system plugins and
// restores; disabling a provider undoes its consumers first.
func Example() {
	ctx := context.Background()
	k := kernel.New(kernel.Options{Name: "demo"})
	_ = k.DefineKey("greeter", kernel.KeyMeta{MinProviderTrust: kernel.TrustSystem})
	_ = k.DefinePoint("greeting", kernel.PointMeta{})

	_ = k.Install(kernel.Plugin{
		Manifest: kernel.Manifest{ID: "demo.greeter", Version: "1", Provide: []string{"greeter"}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			return c.Provide("greeter", strings.ToUpper)
		},
	})
	_ = k.Install(kernel.Plugin{
		Manifest: kernel.Manifest{ID: "demo.hello", Version: "1", Inject: []string{"greeter"},
			Contributes: map[string][]any{"greeting": {"hello"}}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			up, err := kernel.Lookup[func(string) string](c, "greeter")
			if err != nil {
				return err
			}
			_, err = c.Contribute("greeting", up("world"))
			return err
		},
	})
	if err := k.Restore(ctx); err != nil {
		fmt.Println(err)
	}
	for _, c := range k.Contributions("greeting") {
		fmt.Println(c.Fiber, c.Item)
	}
	_ = k.ForceDisable(ctx, "demo.greeter")
	v, _ := k.Fiber("demo.hello")
	fmt.Println(v.State, len(k.Contributions("greeting")))
	// Output:
	// demo.hello hello
	// demo.hello WORLD
	// inactive 0
}
