#!/usr/bin/env bash
# Builds the Dockerfile's image with podman, daemonless: `podman build --isolation=chroot` runs each RUN
# step in a chroot on the host's network, so it needs no container runtime and no bridge network.
#
#   deploy/image-build.sh [tag] [context]   (default tag: flotilla-books; context: this repository)
#
# A context names another project's folder, whose Dockerfile is built the same way (the tutorial's
# test builds a user's project so: test/docs/tutorial.test.ts).
#
# The base image the Dockerfile names (node:24-slim) is used when podman has it or can pull it. Where
# it can do neither (a machine that reaches the npm registry and a Debian mirror, but no container
# registry), a stand-in is assembled once and tagged with the same name, so the Dockerfile builds
# unchanged. It is laid out as the official image is: Debian slim (debootstrap, the suite the official
# image is built on), Node 24 and npm in /usr/local, a `node` user and group with id 1000, the official
# entrypoint (`docker-entrypoint.sh`, which execs its arguments) and CMD ["node"]. The Node binary is
# this machine's Node 24 (the `node` devDependency, or `node` on PATH); npm comes from the registry. One
# addition: npm in the stand-in uses this machine's registry and trusts the certificates npm here trusts,
# so `npm ci` inside the build goes where `npm ci` outside it goes (through a TLS-inspecting proxy too).
# Assembling it needs root and debootstrap. Environment: DEBIAN_SUITE (trixie), DEBIAN_MIRROR
# (http://deb.debian.org/debian), NPM_VERSION (11, the npm major Node 24 ships with).
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${1:-flotilla-books}"
context="${2:-.}"
base="$(awk '$1 == "FROM" { print $2; exit }' "$context/Dockerfile")"
case "$base" in
  */*) ref="$base" ;;
  *) ref="docker.io/library/$base" ;;
esac

say() { printf 'image-build: %s\n' "$*" >&2; }
work=""
# --one-file-system: never into a /proc or /sys a failed debootstrap left mounted in the root.
trap '[ -z "$work" ] || rm -rf --one-file-system "$work"' EXIT

assemble_base() {
  local major="${base#node:}"
  major="${major%%[-.]*}"
  local suite="${DEBIAN_SUITE:-trixie}" mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  local npm_version="${NPM_VERSION:-11}"

  [ "$(id -u)" -eq 0 ] || { say "assembling a stand-in for $ref needs root (debootstrap, chroot); or pull $ref"; return 1; }
  command -v debootstrap >/dev/null || { say "assembling a stand-in for $ref needs debootstrap (apt-get install debootstrap)"; return 1; }

  local node_bin="" candidate
  for candidate in node_modules/node/bin/node "$(command -v node || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] &&
      [ "$("$candidate" -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
      node_bin="$candidate"
      break
    fi
  done
  [ -n "$node_bin" ] || { say "no Node $major binary here (npm ci installs one in node_modules/node)"; return 1; }
  local node_version
  node_version="$("$node_bin" -p 'process.versions.node')"

  work="$(mktemp -d)"
  local root="$work/rootfs"

  say "assembling a stand-in for $ref: Debian $suite (debootstrap), Node $node_version, npm $npm_version"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; return 1; }

  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

  install -m 755 "$node_bin" "$root/usr/local/bin/node"
  ln -s node "$root/usr/local/bin/nodejs"
  (cd "$work" && npm pack "npm@$npm_version" --silent >/dev/null)
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

  # npm's global config ($PREFIX/etc/npmrc): this machine's registry, and the certificates npm here trusts
  # beyond Node's own (NODE_EXTRA_CA_CERTS, npm's cafile), e.g. a TLS-inspecting proxy's.
  mkdir -p "$root/usr/local/etc"
  local registry cafile extra=""
  registry="$(npm config get registry 2>/dev/null || true)"
  printf 'registry=%s\n' "${registry:-https://registry.npmjs.org/}" >"$root/usr/local/etc/npmrc"
  cafile="$(npm config get cafile 2>/dev/null || true)"
  for candidate in "${NODE_EXTRA_CA_CERTS:-}" "$cafile"; do
    if [ -n "$candidate" ] && [ "$candidate" != null ] && [ -r "$candidate" ]; then extra+="$(cat "$candidate")"$'\n'; fi
  done
  if [ -n "$extra" ]; then
    { "$node_bin" -p 'require("node:tls").rootCertificates.join("\n")'; printf '%s' "$extra"; } >"$root/usr/local/etc/npm-ca.pem"
    printf 'cafile=/usr/local/etc/npm-ca.pem\n' >>"$root/usr/local/etc/npmrc"
  fi

  cat >"$root/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
# Run the command with node if the first argument is an option, not a command, or a non-executable file.
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOF
  chmod 755 "$root/usr/local/bin/docker-entrypoint.sh"
  chroot "$root" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin npm --version >/dev/null

  # Slim: no documentation, manual pages, translations or package lists.
  rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/* \
    "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/tmp/*

  tar -C "$root" --numeric-owner -cf - . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
    --change 'CMD ["node"]' \
    - "$ref" >/dev/null
  say "stand-in tagged $ref"
}

command -v podman >/dev/null || { say "podman is not installed (apt-get install podman)"; exit 1; }
# One build at a time finds or assembles the base: two builds at once would both assemble it.
exec 9>"${TMPDIR:-/tmp}/flotilla-image-base.lock"
flock 9
if ! podman image exists "$ref" && ! podman pull -q "$ref" >/dev/null 2>&1; then
  assemble_base
fi
flock -u 9

# Docker's image format keeps the HEALTHCHECK (the OCI format has no field for it).
podman build --isolation=chroot --format docker --tag "$tag" "$context"
