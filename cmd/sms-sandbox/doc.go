// Command sms-sandbox is the isolated executor's child: it serves one agent
// plugin over stdin and stdout under the OS limits its parent sets in the
// environment, exactly as the hidden `manager sandbox` subcommand does,
// but links only the JavaScript runtime and its side of the protocol, so
// that each child maps and initializes a few megabytes instead of the
// kernel's binary. A kernel starts it when it lies beside the kernel's
// own executable (isolated.DefaultCommand); it is not meant to be run by
// hand.
package main
