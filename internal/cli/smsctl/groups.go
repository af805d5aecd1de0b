package smsctl

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// newGroupsCommand returns groups: list groups, make them, change their
// members and their access.
func newGroupsCommand(o *options) *cobra.Command {
	var s signIn
	cmd := &cobra.Command{Use: "groups", Short: "List groups, change their members and their access (as one of the application's admins)",
		Example: "  kubectl sms groups create acme clerks --as root --password-file root.pw\n" +
			"  kubectl sms groups add acme clerks cleo --as root --password-file root.pw\n" +
			"  kubectl sms groups grant acme clerks model/invoice --read --create --write --as root --password-file root.pw"}
	s.flags(cmd)
	run := func(use, short string, n int, fn func(ctx context.Context, kc *adminv1.Client, args []string) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(n), RunE: func(c *cobra.Command, args []string) error {
			return o.withUsers(c, args[0], s, func(kc *adminv1.Client) error { return fn(c.Context(), kc, args[1:]) })
		}}
	}
	var implies []string
	var description string
	create := run("create TENANT GROUP", "Create a group", 2, func(ctx context.Context, kc *adminv1.Client, a []string) error {
		return kc.CreateGroup(ctx, a[0], implies, description)
	})
	create.Flags().StringSliceVar(&implies, "implies", nil, "groups whose rights the group's members get too")
	create.Flags().StringVar(&description, "description", "", "what the group is for")
	var grant adminv1.Access
	grantCmd := run("grant TENANT GROUP model/NAME|collection/NAME", "Set what a group may do to a model or a collection ('*' for all)", 3,
		func(ctx context.Context, kc *adminv1.Client, a []string) error {
			g, err := accessOf(a[0], a[1])
			if err != nil {
				return err
			}
			g.Read, g.Create, g.Write, g.Unlink = grant.Read, grant.Create, grant.Write, grant.Unlink
			return kc.Grant(ctx, g)
		})
	grantCmd.Flags().BoolVar(&grant.Read, "read", false, "may read")
	grantCmd.Flags().BoolVar(&grant.Create, "create", false, "may create")
	grantCmd.Flags().BoolVar(&grant.Write, "write", false, "may write")
	grantCmd.Flags().BoolVar(&grant.Unlink, "unlink", false, "may delete")
	cmd.AddCommand(
		run("list TENANT", "List the groups, their members and their access", 1, func(ctx context.Context, kc *adminv1.Client, _ []string) error {
			gs, err := kc.Groups(ctx)
			if err == nil {
				o.printGroups(gs)
			}
			return err
		}),
		create,
		run("delete TENANT GROUP", "Delete a group made over the API", 2, func(ctx context.Context, kc *adminv1.Client, a []string) error {
			return kc.DeleteGroup(ctx, a[0])
		}),
		run("add TENANT GROUP LOGIN", "Add a user to a group", 3, func(ctx context.Context, kc *adminv1.Client, a []string) error {
			return kc.AddMember(ctx, a[0], a[1])
		}),
		run("remove TENANT GROUP LOGIN", "Take a user out of a group", 3, func(ctx context.Context, kc *adminv1.Client, a []string) error {
			return kc.RemoveMember(ctx, a[0], a[1])
		}),
		grantCmd,
		run("revoke TENANT GROUP model/NAME|collection/NAME", "Remove what a group may do to a model or a collection", 3,
			func(ctx context.Context, kc *adminv1.Client, a []string) error {
				g, err := accessOf(a[0], a[1])
				if err != nil {
					return err
				}
				return kc.Revoke(ctx, g)
			}))
	return cmd
}

// accessOf reads model/NAME or collection/NAME.
func accessOf(group, target string) (adminv1.Access, error) {
	kind, name, ok := strings.Cut(target, "/")
	switch {
	case ok && kind == "model" && name != "":
		return adminv1.Access{Group: group, Model: name}, nil
	case ok && kind == "collection" && name != "":
		return adminv1.Access{Group: group, Collection: name}, nil
	}
	return adminv1.Access{}, fmt.Errorf("%q: name a model/NAME or a collection/NAME", target)
}

func (o *options) printGroups(gs []adminv1.Group) {
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "GROUP\tFROM\tIMPLIES\tMEMBERS\tACCESS")
	for _, g := range gs {
		from := "api"
		if g.Code {
			from = "code"
		}
		var access []string
		for _, a := range g.Access {
			access = append(access, accessLine(a))
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", g.Name, from, dash(strings.Join(g.Implies, ",")),
			dash(strings.Join(g.Members, ",")), dash(strings.Join(access, " ")))
	}
	_ = w.Flush()
}

// accessLine is "model/invoice:rcw-".
func accessLine(a adminv1.Access) string {
	target := "model/" + a.Model
	if a.Collection != "" {
		target = "collection/" + a.Collection
	}
	flag := func(on bool, c string) string {
		if on {
			return c
		}
		return "-"
	}
	return target + ":" + flag(a.Read, "r") + flag(a.Create, "c") + flag(a.Write, "w") + flag(a.Unlink, "u")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
