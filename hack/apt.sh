# shellcheck shell=bash
# Sourced by the scripts that install Debian packages. apt-get waits for
# dpkg's lock (DPkg::Lock::Timeout) but not for the package lists' lock,
# which another script's `apt-get update` holds: .ci/run builds the real
# cluster's pieces in the background while the tests install Chromium.
# Every apt-get of ours first takes one lock of its own, so they queue.
apt_get() {
	flock -w 1200 "${TMPDIR:-/tmp}/sms-apt.lock" apt-get -o DPkg::Lock::Timeout=600 "$@"
}
