#!/usr/bin/env bash
# Make sure headless Chromium is here for the console's browser tests:
# Debian's chromium package, installed with apt-get when missing (as
# root). Prints the export line for SMS_CHROMIUM on stdout.
#
#   eval "$(hack/chromium.sh)"
#
# SMS_CHROMIUM names a browser to use instead.
set -euo pipefail
# shellcheck source=hack/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

bin="${SMS_CHROMIUM:-}"
if [[ -z "$bin" ]]; then
	bin=$(command -v chromium || true)
fi
if [[ -z "$bin" ]]; then
	[[ "$(id -u)" == 0 ]] || die "Chromium is missing: install Debian's chromium package (apt-get install chromium) as root, or set SMS_CHROMIUM"
	log "installing Debian's chromium package (once; about a minute)"
	# Two runs may install at once: apt_get queues them (hack/apt.sh).
	export DEBIAN_FRONTEND=noninteractive
	apt_get update -qq >&2 ||
		die "apt-get update failed"
	apt_get install -y -qq chromium >&2 ||
		die "apt-get install chromium failed"
	bin=$(command -v chromium) || die "the chromium package installed no chromium command"
fi
[[ -x "$bin" ]] || die "$bin is not an executable"
printf 'export SMS_CHROMIUM=%s\n' "$bin"
