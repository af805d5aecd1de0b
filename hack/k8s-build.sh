# shellcheck shell=bash
# Sourced by setup-envtest.sh and setup-realk8s.sh: builds commands of
# k8s.io/kubernetes at KUBERNETES_VERSION from the Go module proxy. The
# module's go.mod points every k8s.io staging module at ./staging/src,
# which the published module does not contain, so a private copy of the
# source gets those replaces rewritten to the published v0.x versions. The
# version ldflags make each binary report its real version. The caller
# defines log and die.

# k8s_build OUT WORK CMD... builds ./cmd/CMD of k8s.io/kubernetes into OUT,
# using WORK for the copy of the source.
k8s_build() {
	local out="$1" work="$2"
	shift 2
	local staged="v0.${KUBERNETES_VERSION#v1.}" src minor
	if [[ ! -d "$work/kubernetes" ]]; then
		log "downloading k8s.io/kubernetes@$KUBERNETES_VERSION"
		src="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
		[[ -d "$src" ]] || die "go mod download k8s.io/kubernetes@$KUBERNETES_VERSION gave no source directory"
		cp -r "$src" "$work/kubernetes"
		chmod -R u+w "$work/kubernetes"
		sed -i -E "s#^([[:space:]]*k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+\$#\1 => \1 $staged#" \
			"$work/kubernetes/go.mod"
		if grep -q '=> ./staging' "$work/kubernetes/go.mod"; then
			die "some staging replaces were not rewritten in k8s.io/kubernetes' go.mod"
		fi
	fi
	minor="${KUBERNETES_VERSION#v1.}"
	minor="${minor%%.*}"
	local pkg=k8s.io/component-base/version
	local ldflags="-s -w -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	local cmd pkgs=()
	for cmd in "$@"; do pkgs+=("./cmd/$cmd"); done
	# One go build for every command: they share the compiled packages, and
	# their links (long, mostly on one core) run side by side.
	log "building $* $KUBERNETES_VERSION (minutes on a small machine)"
	mkdir -p "$out"
	(cd "$work/kubernetes" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off \
		go build -trimpath -ldflags "$ldflags" -o "$out/" "${pkgs[@]}")
	for cmd in "$@"; do [[ -x "$out/$cmd" ]] || die "go build wrote no $out/$cmd"; done
}
