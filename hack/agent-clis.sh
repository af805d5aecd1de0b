#!/usr/bin/env bash
# Install the agent CLIs the claude-cli and codex-cli model drivers run,
# for their tests: @anthropic-ai/claude-code and @openai/codex from the
# npm registry, pinned, into a cache keyed by their versions (about 800 MB,
# a few seconds to a minute once). Node.js and npm come from Debian's
# packages when missing (as root). Prints the export lines for
# SMS_CLAUDE_CLI and SMS_CODEX_CLI on stdout; progress goes to stderr.
#
#   eval "$(hack/agent-clis.sh)"
#
# The tests run the CLIs offline, against local fakes of the providers'
# APIs; nothing here logs in.
set -euo pipefail
# shellcheck source=hack/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

CLAUDE_CODE_VERSION=${CLAUDE_CODE_VERSION:-2.1.332}
CODEX_VERSION=${CODEX_VERSION:-0.171.0}

log() { printf 'agent-clis.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if ! command -v npm >/dev/null; then
	[[ "$(id -u)" == 0 ]] || die "npm is missing: install Debian's nodejs and npm packages (apt-get install nodejs npm) as root"
	log "installing Debian's nodejs and npm packages (once)"
	export DEBIAN_FRONTEND=noninteractive
	apt_get update -qq >&2 || die "apt-get update failed"
	apt_get install -y -qq nodejs npm >&2 || die "apt-get install nodejs npm failed"
fi

dir="${XDG_CACHE_HOME:-$HOME/.cache}/sms-agent-clis/claude-$CLAUDE_CODE_VERSION-codex-$CODEX_VERSION"
mkdir -p "$dir"
# One install at a time; a second run waits and reuses the first's.
exec 9>"$dir.lock"
flock 9
claude="$dir/node_modules/.bin/claude"
codex="$dir/node_modules/.bin/codex"
if ! "$claude" --version >/dev/null 2>&1 || ! "$codex" --version >/dev/null 2>&1; then
	log "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $dir (once)"
	rm -rf "$dir/node_modules"
	npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
		"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2 ||
		die "npm install of the agent CLIs failed"
	"$claude" --version >/dev/null || die "$claude does not run"
	"$codex" --version >/dev/null || die "$codex does not run"
fi
exec 9>&-
printf 'export SMS_CLAUDE_CLI=%s\n' "$claude"
printf 'export SMS_CODEX_CLI=%s\n' "$codex"
