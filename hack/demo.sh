#!/usr/bin/env bash
# The sms story, offline, against `manager dev`: apply a tenant and plugins,
# watch the three verdicts, approve with kubectl, chat so the agent defines a
# plugin, see it mirrored as a Plugin, export it, disable it, restart, and see
# everything restored. Each step is printed; any unmet expectation stops the
# demo with a message and a non-zero exit.
#
# Environment:
#   MANAGER          the manager binary (default bin/manager)
#   KUBECTL_SMS_DIR  directory holding kubectl-sms (default bin)
#   SMS_DEMO_DIR     manager dev's state directory (default: a new temporary
#                    directory, removed at the end)
#   KUBECTL          the kubectl binary (default kubectl)
set -euo pipefail

cd "$(dirname "$0")/.."
MANAGER=${MANAGER:-bin/manager}
KUBECTL=${KUBECTL:-kubectl}
PATH="$(cd "${KUBECTL_SMS_DIR:-bin}" && pwd):$PATH"
export PATH
keep_dir=1
if [[ -z "${SMS_DEMO_DIR:-}" ]]; then
	SMS_DEMO_DIR=$(mktemp -d)
	keep_dir=0
fi
export KUBECONFIG="$SMS_DEMO_DIR/kubeconfig"
samples=config/samples
STORY=demo STORY_DIR=$SMS_DEMO_DIR
DEV_ARGS=()
# shellcheck source=hack/story-lib.sh
. hack/story-lib.sh

# expect_jsonpath OBJECT JSONPATH WANT: the field must equal WANT.
expect_jsonpath() {
	local got
	got=$("$KUBECTL" get "$1" -o "jsonpath=$2")
	[[ "$got" == "$3" ]] || fail "$1 $2: want '$3', got '$got'"
	printf 'ok: %s %s = %s\n' "$1" "$2" "$3"
}

# expect_output WANT COMMAND...: the command's output must contain WANT.
expect_output() {
	local want=$1 out
	shift
	printf '$ %s\n' "$*"
	out=$("$@") || fail "$* failed"
	printf '%s\n' "$out"
	grep -qF -- "$want" <<<"$out" || fail "$*: output lacks '$want'"
}

# expect_route PATH WANT: the tenant's kernel answers PATH with WANT within
# 30 s (after a restart, the status read from etcd is older than the kernel).
expect_route() {
	local out=
	printf '$ route %s\n' "$1"
	for _ in $(seq 1 60); do
		out=$(route "$1" 2>/dev/null) && break
		sleep 0.5
	done
	printf '%s\n' "$out"
	grep -qF -- "$2" <<<"$out" || fail "GET $1: want '$2', got '$out'"
}


# route GET path against the tenant's kernel: the application's own API.
route() {
	local endpoint
	endpoint=$("$KUBECTL" get tenant demo -o 'jsonpath={.status.endpoint}')
	curl -fsS "$endpoint$1"
}

step "Start manager dev (state in $SMS_DEMO_DIR)"
start_dev
run "$KUBECTL" get crd tenants.sms.dev plugins.sms.dev approvals.sms.dev

step "A second manager dev on the same directory refuses to start"
if out=$("$MANAGER" dev --dir "$SMS_DEMO_DIR" 2>&1); then fail "a second manager dev started"; fi
printf '%s\n' "$out"
grep -q "another manager dev is running" <<<"$out" || fail "the second manager dev did not say why it refused"

step "Apply a tenant; its kernel starts"
run "$KUBECTL" apply -f "$samples/sms_v1_tenant.yaml"
wait_for --for=condition=Ready tenant/demo

step "Apply three plugins: one mounts at once, one waits for a human, one is rejected"
run "$KUBECTL" apply -f "$samples/sms_v1_plugin_mounted.yaml" -f "$samples/sms_v1_plugin_pending.yaml" -f "$samples/sms_v1_plugin_rejected.yaml"
wait_for --for=condition=Ready plugin/greeting
wait_for --for=condition=Judged plugin/hello
wait_for --for=jsonpath='{.status.verdict.result}'=pending plugin/hello
wait_for --for=jsonpath='{.status.verdict.result}'=rejected plugin/reader
expect_jsonpath plugin/reader '{.status.conditions[?(@.type=="Judged")].reason}' GateLint
run "$KUBECTL" get plugins,approvals
expect_output "Pending approvals" kubectl sms status demo

step "The console is served; what waits names the command that approves it"
expect_output "<title>sms console</title>" route /console
chat_token=$("$KUBECTL" get secret demo-kernel-chat -o 'jsonpath={.data.token}' | base64 -d)
printf '$ GET /api/approvals (the console'"'"'s view, with the chat token)\n'
out=$(curl -fsS -H "Authorization: Bearer $chat_token" "$("$KUBECTL" get tenant demo -o 'jsonpath={.status.endpoint}')/api/approvals")
grep -qF -- "kubectl sms approve -n default --tenant demo kernel-approval/agent.hello-" <<<"$out" || fail "GET /api/approvals: want the kubectl command, got '$out'"

step "Approve the pending plugin with kubectl; it mounts and serves its route"
expect_output "approved" kubectl sms approve hello -m "reviewed in the demo"
wait_for --for=condition=Ready plugin/hello
expect_output '"hello":"world"' route /hello/world

step "Chat: the agent defines a plugin, which appears as a Plugin object"
expect_output "21 doubled is 42." kubectl sms chat demo "add a tool that doubles a number"
wait_for --for=create plugin/demo-agent-doubler
wait_for --for=condition=Mounted plugin/demo-agent-doubler
expect_jsonpath plugin/demo-agent-doubler '{.status.origin}' agent

step "Export the mounted plugins, the agent's included, as YAML for git"
expect_output "id: agent.doubler" kubectl sms export demo

step "Disable the agent's plugin"
run "$KUBECTL" patch plugin demo-agent-doubler --type merge -p '{"spec":{"enabled":false}}'
wait_for --for=condition=Mounted=false plugin/demo-agent-doubler
expect_jsonpath plugin/demo-agent-doubler '{.status.conditions[?(@.type=="Mounted")].reason}' Disabled

step "Restart manager dev; everything comes back"
stop_dev
start_dev
wait_for --for=condition=Ready tenant/demo
wait_for --for=condition=Ready plugin/greeting plugin/hello
expect_route /hello/world '"hello":"world"'
expect_jsonpath plugin/reader '{.status.verdict.result}' rejected
expect_jsonpath plugin/demo-agent-doubler '{.status.conditions[?(@.type=="Mounted")].status}' False
expect_output "plugin/disabled" kubectl sms logs demo

step "The story holds"
run kubectl sms status demo
printf '\n\033[32mdemo passed\033[0m\n'
