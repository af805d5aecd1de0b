#!/usr/bin/env bash
# Start and stop a throwaway S3-compatible server for tests and benchmarks:
# Versity's S3 gateway (versitygw, Apache-2.0) over a directory, built once
# from the Go module proxy into a cache keyed by its version.
#
#   eval "$(hack/s3.sh start)"   # exports SMS_TEST_S3_ENDPOINT, SMS_TEST_S3_ACCESS_KEY,
#                                # SMS_TEST_S3_SECRET_KEY and SMS_S3_DIR
#   hack/s3.sh stop [DIR]        # DIR defaults to $SMS_S3_DIR
#   hack/s3.sh build             # only build the binary (and print its path)
#
# The cache is ${XDG_CACHE_HOME:-~/.cache}/sms-s3/versitygw-$VERSITYGW_VERSION;
# SMS_S3_BIN names a versitygw binary to use instead. Every start gets its own
# directory, port (on 127.0.0.1 only) and keys. Only the export lines go to
# stdout; progress and errors go to stderr.
set -euo pipefail

VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}

log() { printf 's3.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# binary prints the path of versitygw, building it when the cache lacks it.
binary() {
	if [[ -n "${SMS_S3_BIN:-}" ]]; then
		[[ -x "$SMS_S3_BIN" ]] || die "SMS_S3_BIN=$SMS_S3_BIN is not an executable"
		printf '%s\n' "$SMS_S3_BIN"
		return
	fi
	local dir="${XDG_CACHE_HOME:-$HOME/.cache}/sms-s3/versitygw-$VERSITYGW_VERSION"
	mkdir -p "$dir"
	# One build at a time: CI builds it in the background while a test run
	# may ask for it; the second waits and reuses the first's binary.
	exec 9>"$dir.lock"
	flock 9
	if [[ ! -x "$dir/versitygw" ]]; then
		log "building versitygw $VERSITYGW_VERSION into $dir (once; about two minutes on empty caches)"
		GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2 ||
			die "go install github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION failed"
	fi
	exec 9>&-
	printf '%s\n' "$dir/versitygw"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
	local bin dir port access secret
	bin=$(binary)
	dir=$(mktemp -d "${TMPDIR:-/tmp}/sms-s3.XXXXXX")
	mkdir -p "$dir/data" "$dir/meta"
	port=$(free_port)
	access="sms$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	secret="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	"$bin" --access "$access" --secret "$secret" --port "127.0.0.1:$port" \
		posix --sidecar "$dir/meta" "$dir/data" >"$dir/server.log" 2>&1 &
	echo $! >"$dir/pid"
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			log "server ready on 127.0.0.1:$port"
			printf 'export SMS_TEST_S3_ENDPOINT=http://127.0.0.1:%s\n' "$port"
			printf 'export SMS_TEST_S3_ACCESS_KEY=%s\n' "$access"
			printf 'export SMS_TEST_S3_SECRET_KEY=%s\n' "$secret"
			printf 'export SMS_S3_DIR=%s\n' "$dir"
			return
		fi
		kill -0 "$(cat "$dir/pid")" 2>/dev/null || die "versitygw exited: $(cat "$dir/server.log")"
		sleep 0.1
	done
	die "versitygw did not listen on 127.0.0.1:$port: $(cat "$dir/server.log")"
}

stop() {
	local dir="${1:-${SMS_S3_DIR:-}}"
	[[ -n "$dir" && -f "$dir/pid" ]] || die "no server directory (give DIR or set SMS_S3_DIR)"
	kill "$(cat "$dir/pid")" 2>/dev/null || true
	rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
build) binary ;;
stop) stop "${2:-}" ;;
*)
	printf 'usage: hack/s3.sh start\n       hack/s3.sh stop [DIR]\n       hack/s3.sh build\n' >&2
	exit 2
	;;
esac
