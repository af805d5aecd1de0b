#!/usr/bin/env bash
# Write an OCI image archive of static files, with nothing but tar and
# sha256sum: no container engine, no registry, no base image.
#
#   hack/oci-image.sh OUT.tar NAME USER ENTRYPOINT SRC=DEST...
#
# OUT.tar gets one uncompressed layer holding each SRC file at DEST
# (owned by root, keeping SRC's mode), a config running ENTRYPOINT as USER
# ("uid:gid"), and an index naming the image NAME (for example
# localhost/sms/manager:dev), which `ctr images import` uses as its name.
# The archive is reproducible: the same files give the same digests.
set -euo pipefail

die() { printf 'oci-image.sh: error: %s\n' "$*" >&2; exit 1; }

(($# >= 5)) || die "usage: oci-image.sh OUT.tar NAME USER ENTRYPOINT SRC=DEST..."
out="$1" name="$2" user="$3" entrypoint="$4"
shift 4
[[ "$name" == *:* ]] || die "name $name: want a repository and a tag, such as localhost/sms/manager:dev"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root" "$work/image/blobs/sha256"
for pair in "$@"; do
	src="${pair%%=*}" dest="${pair#*=}"
	[[ -f "$src" ]] || die "$src is not a file"
	[[ "$dest" == /* ]] || die "$dest: want an absolute path in the image"
	install -D -m "$(stat -c %a "$src")" "$src" "$work/root$dest"
done
mkdir -p "$work/root/tmp" && chmod 1777 "$work/root/tmp"

# blob FILE: moves FILE into the blobs, prints its digest and size.
blob() {
	local sum size
	sum="$(sha256sum "$1" | cut -d' ' -f1)"
	size="$(stat -c %s "$1")"
	mv "$1" "$work/image/blobs/sha256/$sum"
	printf 'sha256:%s %s\n' "$sum" "$size"
}

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/root" -cf "$work/layer.tar" .
read -r layer layer_size < <(blob "$work/layer.tar")

printf '{"architecture":"%s","os":"linux","config":{"User":"%s","Entrypoint":["%s"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
	"$(go env GOARCH)" "$user" "$entrypoint" "$layer" >"$work/config.json"
read -r config config_size < <(blob "$work/config.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
	"$config" "$config_size" "$layer" "$layer_size" >"$work/manifest.json"
read -r manifest manifest_size < <(blob "$work/manifest.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
	"$manifest" "$manifest_size" "$name" "${name##*:}" >"$work/image/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/image/oci-layout"

mkdir -p "$(dirname "$out")"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/image" -cf "$out" .
printf 'oci-image.sh: wrote %s (%s)\n' "$out" "$name" >&2
