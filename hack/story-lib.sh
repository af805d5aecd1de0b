# Helpers the stories told against `manager dev` share (hack/demo.sh,
# examples/erp/story.sh). Source it after setting:
#   MANAGER    the manager binary
#   STORY      the story's name, for its failure message
#   STORY_DIR  manager dev's state directory; KUBECONFIG is its kubeconfig
#   DEV_ARGS   (array, optional) more arguments for manager dev
# It defines step, run, fail, start_dev, stop_dev and wait_for, and stops
# manager dev when the script exits.

dev_pid=
dev_log="$STORY_DIR/manager-dev.log"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

fail() {
	printf '\n\033[31m%s failed: %s\033[0m\n' "$STORY" "$*" >&2
	if [[ -f "$dev_log" ]]; then
		printf -- '--- last lines of manager dev ---\n' >&2
		tail -n 40 "$dev_log" >&2
	fi
	exit 1
}

# start_dev runs manager dev in the background and waits for its kubeconfig,
# which it writes once everything, the webhook included, is serving.
start_dev() {
	rm -f "$KUBECONFIG"
	"$MANAGER" dev --dir "$STORY_DIR" "${DEV_ARGS[@]}" >>"$dev_log" 2>&1 &
	dev_pid=$!
	for _ in $(seq 1 600); do
		[[ -s "$KUBECONFIG" ]] && return 0
		kill -0 "$dev_pid" 2>/dev/null || fail "manager dev exited while starting"
		sleep 0.2
	done
	fail "manager dev did not write $KUBECONFIG within 120 s"
}

stop_dev() {
	[[ -n "$dev_pid" ]] || return 0
	kill -INT "$dev_pid" 2>/dev/null || true
	wait "$dev_pid" 2>/dev/null || true
	dev_pid=
}

wait_for() { run "$KUBECTL" wait --timeout=180s "$@" || fail "kubectl wait $*"; }

# story_cleanup stops manager dev and removes STORY_DIR unless the caller
# chose it (keep_dir=1).
story_cleanup() {
	stop_dev
	if [[ ${keep_dir:-1} == 0 ]]; then rm -rf "$STORY_DIR"; fi
}
trap story_cleanup EXIT
