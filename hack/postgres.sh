#!/usr/bin/env bash
# Start and stop a throwaway PostgreSQL server for tests and benchmarks.
#
#   eval "$(hack/postgres.sh start)"   # exports SMS_TEST_POSTGRES_URL and SMS_POSTGRES_DIR
#   hack/postgres.sh stop [DIR]        # DIR defaults to $SMS_POSTGRES_DIR
#
# The server uses the machine's own server binaries (PG_BIN, or the highest
# version under /usr/lib/postgresql/*/bin), lives in a new temporary directory,
# listens on a free port on 127.0.0.1 only, keeps its unix socket in that
# directory and trusts local and loopback connections. Every start gets its own
# directory and port, so several servers can run side by side.
#
# PG_LISTEN (default 127.0.0.1) is the address it listens on instead, and
# PG_TRUST_NET a network whose clients it also trusts: the real-cluster
# tests run it inside the cluster's network namespace on the node's address
# and trust the pod network, so that kernel pods reach it.
#
# Only the two export lines go to stdout; progress and errors go to stderr.
set -euo pipefail

readonly marker=".sms-postgres"

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
	cat >&2 <<'EOF'
usage: hack/postgres.sh start
       hack/postgres.sh stop [DIR]
EOF
	exit 2
}

# find_bin prints the directory holding initdb, pg_ctl and postgres.
find_bin() {
	if [[ -n "${PG_BIN:-}" ]]; then
		has_server_bins "$PG_BIN" || die "PG_BIN=$PG_BIN does not contain initdb, pg_ctl and postgres"
		printf '%s\n' "$PG_BIN"
		return
	fi
	local candidate best=""
	while IFS= read -r candidate; do
		if has_server_bins "$candidate"; then best="$candidate"; fi
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -V)
	if [[ -z "$best" ]]; then
		die "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found under /usr/lib/postgresql/*/bin; install the Debian package 'postgresql' (apt-get install postgresql) or set PG_BIN to the directory holding them"
	fi
	printf '%s\n' "$best"
}

has_server_bins() {
	[[ -x "$1/initdb" && -x "$1/pg_ctl" && -x "$1/postgres" ]]
}

# as_server_user runs a command as the postgres user when we are root
# (the server refuses to run as root) and directly otherwise.
as_server_user() {
	if [[ "$(id -u)" -ne 0 ]]; then
		(cd / && "$@")
	elif command -v runuser >/dev/null 2>&1; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && su postgres -s /bin/sh -c "$(printf '%q ' "$@")")
	fi
}

free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
		return
	fi
	local port
	for _ in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			printf '%s\n' "$port"
			return
		fi
	done
	die "could not find a free port on 127.0.0.1"
}

start() {
	local bin dir port attempt
	bin="$(find_bin)"
	dir="$(mktemp -d "${TMPDIR:-/tmp}/sms-postgres.XXXXXX")"
	printf '%s\n' "$bin" >"$dir/$marker"
	if [[ "$(id -u)" -eq 0 ]]; then
		id postgres >/dev/null 2>&1 || die "running as root needs a 'postgres' user to run the server as"
		chown postgres: "$dir"
	fi
	log "initialising a cluster in $dir with $bin"
	if ! as_server_user "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		rm -rf "$dir"
		die "initdb failed"
	fi
	local listen="${PG_LISTEN:-127.0.0.1}"
	if [[ -n "${PG_TRUST_NET:-}" ]]; then
		printf 'host all all %s trust\n' "$PG_TRUST_NET" >>"$dir/data/pg_hba.conf"
	fi
	for attempt in 1 2 3 4 5; do
		port="$(free_port)"
		cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = '$listen'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
EOF
		if as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >&2; then
			log "server ready on $listen:$port"
			printf 'export SMS_TEST_POSTGRES_URL=postgres://postgres@%s:%s/postgres?sslmode=disable\n' "$listen" "$port"
			printf 'export SMS_POSTGRES_DIR=%s\n' "$dir"
			return
		fi
		log "start on port $port failed (attempt $attempt); retrying"
	done
	tail -n 20 "$dir/server.log" >&2 || true
	rm -rf "$dir"
	die "could not start the server"
}

stop() {
	local dir="${1:-${SMS_POSTGRES_DIR:-}}"
	[[ -n "$dir" ]] || die "stop needs a directory argument or SMS_POSTGRES_DIR"
	if [[ ! -d "$dir" ]]; then
		log "$dir is already gone"
		return
	fi
	[[ -f "$dir/$marker" ]] || die "$dir was not created by this script; refusing to remove it"
	local bin
	bin="$(cat "$dir/$marker")"
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		as_server_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || log "server in $dir was not running"
	fi
	rm -rf "$dir"
	log "stopped and removed $dir"
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
*) usage ;;
esac
