#!/usr/bin/env bash
# The example ERP's story against `manager dev`, offline: the ERP's own kernel
# binary runs for the Tenant erp (spec.image), Sam in sales asks the agent for
# a discount field on invoices and a tool listing the overdue ones, a person
# approves the field with kubectl, the tool answers with Sam's invoices only,
# Sam opens the invoice screen in two batched round trips, an automation the
# agent adds thanks the customer once approved, both plugins survive kernel
# restarts (a new script, then manager dev itself), and
# disabling the agent's plugin removes the field from the API and the tool
# from the agent while the column's data is kept. Any unmet expectation
# stops the story with a message and a non-zero exit.
#
# It runs on a real cluster too: with SMS_STORY_NAMESPACE set, it uses the
# cluster KUBECONFIG names (run it where the kernel's Service answers, such
# as inside hack/realk8s.sh run), the image SMS_STORY_IMAGE, and restarts
# the kernel by deleting its pod instead of restarting manager dev.
#
# Environment:
#   MANAGER          the manager binary (default bin/manager)
#   ERP_KERNEL       the ERP's kernel binary (default bin/erp-kernel)
#   KUBECTL_SMS_DIR  directory holding kubectl-sms (default bin)
#   SMS_STORY_DIR    manager dev's state directory (default: a new temporary
#                    directory, removed at the end)
#   KUBECTL          the kubectl binary (default kubectl)
#   SMS_STORY_NAMESPACE, SMS_STORY_IMAGE  a real cluster's namespace and the
#                    ERP kernel image it runs (see above)
set -euo pipefail

cd "$(dirname "$0")/../.."
MANAGER=${MANAGER:-bin/manager}
ERP_KERNEL=${ERP_KERNEL:-bin/erp-kernel}
KUBECTL=${KUBECTL:-kubectl}
PATH="$(cd "${KUBECTL_SMS_DIR:-bin}" && pwd):$PATH"
export PATH
keep_dir=1
if [[ -z "${SMS_STORY_DIR:-}" ]]; then
	SMS_STORY_DIR=$(mktemp -d)
	keep_dir=0
fi
cluster=${SMS_STORY_NAMESPACE:-}
if [[ -n $cluster ]]; then
	# The namespace becomes the kubeconfig's, for kubectl and kubectl sms.
	"$KUBECTL" config view --raw >"$SMS_STORY_DIR/kubeconfig"
	KUBECONFIG="$SMS_STORY_DIR/kubeconfig" "$KUBECTL" config set-context --current --namespace="$cluster" >/dev/null
fi
export KUBECONFIG="$SMS_STORY_DIR/kubeconfig"
image=${SMS_STORY_IMAGE:-erp-kernel:dev}
erp=examples/erp
root_pw="$SMS_STORY_DIR/root.pw"
sam_pw="$SMS_STORY_DIR/sam.pw"
sue_pw="$SMS_STORY_DIR/sue.pw"
printf 'change-this-password-now' >"$root_pw"
printf 'sam-password-long-enough' >"$sam_pw"
printf 'sue-password-long-enough' >"$sue_pw"

STORY="ERP story" STORY_DIR=$SMS_STORY_DIR
DEV_ARGS=(--image "erp-kernel:dev=$ERP_KERNEL" -v)
# shellcheck source=hack/story-lib.sh
. hack/story-lib.sh
if [[ -n $cluster ]]; then
	start_dev() { :; } # a real cluster: no manager dev
fi

endpoint() {
	if [[ -n $cluster ]]; then
		# Cluster DNS does not reach here; the Service's address does.
		printf 'http://%s:8787' "$("$KUBECTL" get service erp-kernel -o 'jsonpath={.spec.clusterIP}')"
	else
		"$KUBECTL" get tenant erp -o 'jsonpath={.status.endpoint}'
	fi
}

# restart_kernel restarts the tenant's kernel: manager dev with it, or on a
# cluster its pod, which the StatefulSet makes again.
restart_kernel() {
	if [[ -z $cluster ]]; then
		stop_dev
		start_dev
		return
	fi
	run "$KUBECTL" delete pod erp-kernel-0
	for _ in $(seq 1 120); do
		"$KUBECTL" get pod erp-kernel-0 >/dev/null 2>&1 && break
		sleep 1
	done
	wait_for --for=condition=Ready pod/erp-kernel-0
}

# login USER PASSWORD_FILE: signs the user in; their session cookie is kept
# in a jar named for them.
login() {
	local i
	for i in $(seq 1 240); do
		curl -fsS -c "$SMS_STORY_DIR/$1.jar" -H 'X-Sms-Csrf: 1' -H 'Content-Type: application/json' \
			-d "{\"login\":\"$1\",\"password\":\"$(cat "$2")\"}" "$(endpoint)/api/auth/login" >/dev/null 2>&1 && return 0
		sleep 0.5 # a kernel that restarts answers once it is back
	done
	fail "$1 cannot sign in"
}

# as USER METHOD PATH [BODY]: one request with the user's session.
as() {
	local args=(-sS -b "$SMS_STORY_DIR/$1.jar" -H 'X-Sms-Csrf: 1' -H 'Content-Type: application/json' -X "$2")
	[[ $# -lt 4 ]] || args+=(-d "$4")
	printf '$ as %s: %s %s %s\n' "$1" "$2" "$3" "${4:-}" >&2
	curl "${args[@]}" "$(endpoint)$3"
}

# status_as USER METHOD PATH BODY: the HTTP status of one request as the user.
status_as() {
	printf '$ as %s: %s %s %s\n' "$1" "$2" "$3" "$4" >&2
	curl -sS -o /dev/null -w '%{http_code}' -b "$SMS_STORY_DIR/$1.jar" -H 'X-Sms-Csrf: 1' \
		-H 'Content-Type: application/json' -X "$2" -d "$4" "$(endpoint)$3"
}

# expect WANT OUTPUT: OUTPUT must contain WANT.
expect() {
	printf '%s\n' "$2"
	grep -qF -- "$1" <<<"$2" || fail "want '$1'"
}

# overdue asks the agent, as Sam, which invoices are overdue.
overdue() { as sam POST /api/chat '{"session":"s2","text":"which invoices are overdue?"}'; }

# overdue_after_restart asks until the restarted kernel answers WANT: until
# then the old kernel, its script spent, may still answer with an error.
overdue_after_restart() {
	local out=
	for _ in $(seq 1 120); do
		out=$(overdue 2>/dev/null) || true
		grep -qF -- "$1" <<<"$out" && break
		sleep 1
	done
	expect "$1" "$out"
}

step "Start manager dev with the ERP's kernel binary for the image erp-kernel:dev"
start_dev

step "Apply the ERP tenant: its kernel is the ERP's binary, with users and the scripted agent"
run "$KUBECTL" create configmap erp-story --from-file=script.json=$erp/story.json
run "$KUBECTL" label configmap erp-story sms.dev/tenant=erp
sed "s|image: erp-kernel:dev|image: $image|" $erp/config/tenant.yaml | run "$KUBECTL" apply -f -
wait_for --for=condition=Ready tenant/erp

step "The admin adds Sam and Sue to sales"
for u in sam sue; do
	run kubectl sms users create erp $u --new-password-file "$SMS_STORY_DIR/$u.pw" --as root --password-file "$root_pw"
	run kubectl sms groups add erp sales $u --as root --password-file "$root_pw"
done
login sam "$sam_pw"
login sue "$sue_pw"

step "Each creates invoices; each sees their own"
expect '"id":1' "$(as sam POST /api/orm/invoice/create '{"values":{"number":"INV-S1","due":"2026-05-01","state":"posted","customer":1}}')"
expect '"id":1' "$(as sam POST /api/orm/invoice_line/create '{"values":{"invoice":1,"product":1,"quantity":2,"price":100}}')"
expect '"id":2' "$(as sam POST /api/orm/invoice/create '{"values":{"number":"INV-S2","due":"2026-07-01","state":"posted","customer":1}}')"
expect '"id":3' "$(as sue POST /api/orm/invoice/create '{"values":{"number":"INV-U1","due":"2026-04-01","state":"posted","customer":2}}')"
expect '"invoices":2' "$(as sam GET /api/erp/summary)"
expect '"invoices":1' "$(as sue GET /api/erp/summary)"

step "Sam asks the agent for a discount field and an overdue tool; the field waits for a person"
expect pending "$(as sam POST /api/chat '{"session":"s1","text":"add a discount field to invoices and a tool that lists the overdue ones"}')"
wait_for --for=create plugin/erp-agent-discounts
wait_for --for=jsonpath='{.status.verdict.result}'=pending plugin/erp-agent-discounts
run "$KUBECTL" get plugins,approvals

step "A person approves it with kubectl; it mounts"
run kubectl sms approve erp-agent-discounts -m "reviewed in the ERP story"
wait_for --for=condition=Ready plugin/erp-agent-discounts
expect '["agent.tool","db.read","db.schema"]' "$("$KUBECTL" get plugin erp-agent-discounts -o 'jsonpath={.status.capabilities}')"
as sam POST /api/orm/invoice/write '{"ids":[1],"values":{"discount":10}}' >/dev/null

step "The agent's tool answers with Sam's overdue invoices only"
out=$(overdue)
expect '\"number\":\"INV-S1\",\"total\":200' "$out"
if grep -qF 'INV-U1' <<<"$out"; then fail "Sam's tool answered Sue's invoice"; fi

step "Sam opens the invoice screen: the menu and the list's view in one batch, the rows in another"
expect '"name":"sales.unpaid"' "$(as sam POST /api/rpc/meta '[{"jsonrpc":"2.0","id":1,"method":"menus"},{"jsonrpc":"2.0","id":2,"method":"view","params":["invoice","list"]}]')"
expect '"number":"INV-S1"' "$(as sam POST /api/rpc '[{"jsonrpc":"2.0","id":1,"method":"search_read","params":["invoice",[["state","=","posted"]],["number","customer","due","state","total"],{"order":"due"}]},{"jsonrpc":"2.0","id":2,"method":"count","params":["invoice",[]]}]')"

step "Sam asks for an automation that thanks the customer when an invoice is paid; it waits, a person approves it"
expect pending "$(as sam POST /api/chat '{"session":"s3","text":"when an invoice is paid, thank the customer"}')"
wait_for --for=create plugin/erp-agent-paid-thanks
run kubectl sms approve erp-agent-paid-thanks -m "reviewed in the ERP story"
wait_for --for=condition=Ready plugin/erp-agent-paid-thanks

step "Sam marks INV-S2 paid: its thread tracks the state and shows the agent's note"
as sam POST /api/orm/invoice/write '{"ids":[2],"values":{"state":"paid"}}' >/dev/null
thread=
for _ in $(seq 1 60); do
	thread=$(as sam GET /api/audit/invoice/2 2>/dev/null)
	grep -qF 'Paid. Thank you' <<<"$thread" && break
	sleep 0.5 # the agent's automation runs on its own queue
done
expect 'Paid. Thank you' "$thread"
expect 'state: posted → paid' "$thread"

step "A new script restarts the kernel; the field and the tool are still there"
"$KUBECTL" create configmap erp-story --from-file=script.json=$erp/story-after-restart.json --dry-run=client -o yaml |
	run "$KUBECTL" apply -f -
login sam "$sam_pw"
overdue_after_restart '\"discount\":10'
wait_for --for=condition=Ready tenant/erp

step "Restart the kernel (manager dev, or the pod); everything comes back"
restart_kernel
wait_for --for=condition=Ready tenant/erp
wait_for --for=condition=Ready plugin/erp-agent-discounts
login sam "$sam_pw"
overdue_after_restart '\"discount\":10'

step "The Tenant's status shows what Sam's turns used today, counted across the restarts"
used=
for _ in $(seq 1 60); do
	used=$("$KUBECTL" get tenant erp -o 'jsonpath={.status.budget.used.tokens}')
	[[ -n $used && $used != 0 ]] && break
	sleep 1
done
expect EUR "$("$KUBECTL" get tenant erp -o 'jsonpath={.status.budget.currency}')"
[[ -n $used && $used -gt 0 ]] || fail "status.budget.used.tokens is '$used', want the tokens of Sam's turns"

step "Disable the agent's plugin: the field leaves the API and the tool the agent; the data stays"
run "$KUBECTL" patch plugin erp-agent-discounts --type merge -p '{"spec":{"enabled":false}}'
wait_for --for=condition=Mounted=false plugin/erp-agent-discounts
expect 400 "$(status_as sam POST /api/orm/invoice/read '{"ids":[1],"spec":["discount"]}')"
expect '"isError":true' "$(overdue)"
run "$KUBECTL" patch plugin erp-agent-discounts --type merge -p '{"spec":{"enabled":true}}'
wait_for --for=condition=Mounted plugin/erp-agent-discounts
expect '"discount":10' "$(as sam POST /api/orm/invoice/read '{"ids":[1],"spec":["discount"]}')"

printf '\n\033[32mERP story passed\033[0m\n'
