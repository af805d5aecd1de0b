package smsctl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// signIn is how the users and groups commands act: as one of the
// application's admin users, signed in with their password. Kubernetes
// decides who may reach the kernel (a port forward); the application
// decides who may manage its users.
type signIn struct {
	login, passwordFile string
}

func (s *signIn) flags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&s.login, "as", "", "the application admin to act as (required)")
	cmd.PersistentFlags().StringVar(&s.passwordFile, "password-file", "", "file holding that admin's password (required)")
}

// readSecret reads a password file: its first line, without the newline.
func readSecret(flag, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("--%s is required", flag)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	if line = strings.TrimRight(line, "\r"); line == "" {
		return "", fmt.Errorf("--%s: %s is empty", flag, path)
	}
	return line, nil
}

// users returns a client of the tenant's kernel signed in as s, and a func
// that closes the connection.
func (o *options) users(ctx context.Context, tenant string, s signIn) (*adminv1.Client, func(), error) {
	if s.login == "" {
		return nil, nil, errors.New("--as is required: the application admin to act as")
	}
	password, err := readSecret("password-file", s.passwordFile)
	if err != nil {
		return nil, nil, err
	}
	base, _, stop, err := o.endpoint(ctx, tenant)
	if err != nil {
		return nil, nil, err
	}
	jar, _ := cookiejar.New(nil)
	kc := adminv1.New(base, "", &http.Client{Jar: jar, Timeout: adminv1.DefaultTimeout})
	if _, err := kc.Login(ctx, s.login, password); err != nil {
		stop()
		return nil, nil, fmt.Errorf("sign in as %s: %w", s.login, err)
	}
	return kc, stop, nil
}

// withUsers runs fn with a signed-in client.
func (o *options) withUsers(cmd *cobra.Command, tenant string, s signIn, fn func(*adminv1.Client) error) error {
	kc, stop, err := o.users(cmd.Context(), tenant, s)
	if err != nil {
		return err
	}
	defer stop()
	return fn(kc)
}

// newUsersCommand returns users: list, create and change the
// application's users.
func newUsersCommand(o *options) *cobra.Command {
	var s signIn
	var admin bool
	var newPassword string
	cmd := &cobra.Command{Use: "users", Short: "List, create and change the application's users (as one of its admins)",
		Example: "  kubectl sms users list acme --as root --password-file root.pw\n" +
			"  kubectl sms users create acme cleo --new-password-file cleo.pw --as root --password-file root.pw"}
	s.flags(cmd)
	one := func(use, short string, run func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error)) *cobra.Command {
		return &cobra.Command{Use: use + " TENANT LOGIN", Short: short, Args: cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				return o.withUsers(c, args[0], s, func(kc *adminv1.Client) error {
					u, err := run(c.Context(), kc, args[1])
					if err == nil {
						o.printUsers([]adminv1.User{u})
					}
					return err
				})
			}}
	}
	list := &cobra.Command{Use: "list TENANT", Short: "List the users", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return o.withUsers(c, args[0], s, func(kc *adminv1.Client) error {
				us, err := kc.Users(c.Context())
				if err == nil {
					o.printUsers(us)
				}
				return err
			})
		}}
	create := one("create", "Create a user", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
		pw, err := readSecret("new-password-file", newPassword)
		if err != nil {
			return adminv1.User{}, err
		}
		return kc.CreateUser(ctx, adminv1.NewUser{Login: login, Password: pw, Admin: admin})
	})
	create.Flags().BoolVar(&admin, "admin", false, "make the user an admin")
	create.Flags().StringVar(&newPassword, "new-password-file", "", "file holding the new user's password")
	password := one("password", "Set a user's password (ends their sessions)", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
		pw, err := readSecret("new-password-file", newPassword)
		if err != nil {
			return adminv1.User{}, err
		}
		return kc.SetPassword(ctx, login, pw)
	})
	password.Flags().StringVar(&newPassword, "new-password-file", "", "file holding the new password")
	cmd.AddCommand(list, create, password,
		one("deactivate", "Stop a user (ends their sessions)", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
			return kc.Deactivate(ctx, login)
		}),
		one("activate", "Let a deactivated user in again", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
			return kc.Activate(ctx, login)
		}),
		one("make-admin", "Give a user the admin right", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
			return kc.SetAdmin(ctx, login, true)
		}),
		one("revoke-admin", "Take the admin right from a user (ends their sessions)", func(ctx context.Context, kc *adminv1.Client, login string) (adminv1.User, error) {
			return kc.SetAdmin(ctx, login, false)
		}))
	return cmd
}

func (o *options) printUsers(us []adminv1.User) {
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "LOGIN\tADMIN\tACTIVE\tCREATED")
	for _, u := range us {
		_, _ = fmt.Fprintf(w, "%s\t%t\t%t\t%s\n", u.Login, u.Admin, u.Active, u.CreatedAt.Format("2006-01-02"))
	}
	_ = w.Flush()
}
