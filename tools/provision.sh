#!/usr/bin/env bash
# Installs the system tools the tests drive for real, when it can: `npm test` runs it first (`pretest`),
# and so does CI through `npm test`. Debian's package "prometheus", for promtool (metrics exposition)
# and the server /usr/bin/prometheus (a real one scraping a cluster); Chromium (the docs page in a
# headless browser); podman, which builds the Dockerfile's image and runs it (test/deploy/image.test.ts,
# through deploy/image-build.sh): runc runs containers where crun refuses the host's hybrid cgroups,
# debootstrap assembles a stand-in for node:24-slim where no container registry can be reached,
# catatonit is the pause process of the pods `podman kube play` runs (the tutorial's Kubernetes step);
# redis-server and PostgreSQL, the coordinators of schedulers across replicas, each test starting
# throwaway servers of its own (the packages' system services are not used); curl (with HTTP/2) and
# openssl, the clients and the throwaway CA of the TLS and HTTP/2 tests (test/integration/tls-and-http2.test.ts);
# nginx (Debian's nginx-light), the real reverse proxy in front of a cluster in the proxy-header tests;
# testssl.sh, which grades the TLS defaults the way an auditor would.
#
# It installs with apt-get as root or with passwordless sudo. Elsewhere it installs nothing and says,
# one line per missing tool, how to install it: the tests that need it are skipped
# (test/helpers/require-tool.ts). With CI=true a missing tool is an error: nothing may be skipped there.
# FLOTILLA_ABSENT_TOOLS=redis-server,postgresql (or `all`) makes tools count as missing and installs
# nothing, to try the skips on a machine that has them.
set -euo pipefail

absent() { [[ "${FLOTILLA_ABSENT_TOOLS:-}" == all || ",${FLOTILLA_ABSENT_TOOLS:-}," == *",$1,"* ]]; }

# tool → the Debian packages it needs (space-separated) and whether it is there
present() {
  absent "$1" && return 1
  case "$1" in
    prometheus) command -v promtool && command -v prometheus ;;
    chromium) command -v chromium ;;
    podman) command -v podman && command -v runc && command -v debootstrap && command -v catatonit ;;
    redis-server) command -v redis-server ;;
    postgresql) compgen -G '/usr/lib/postgresql/*/bin/initdb' ;;
    curl) command -v curl ;;
    openssl) command -v openssl ;;
    nginx) command -v nginx || [ -x /usr/sbin/nginx ] ;;
    testssl) command -v testssl ;;
  esac >/dev/null 2>&1
}
packages_of() {
  case "$1" in
    podman) echo podman runc debootstrap catatonit ;;
    nginx) echo nginx-light ;;
    testssl) echo testssl.sh ;;
    *) echo "$1" ;;
  esac
}
TOOLS=(prometheus chromium podman redis-server postgresql curl openssl nginx testssl)

missing() {
  for tool in "${TOOLS[@]}"; do present "$tool" || echo "$tool"; done
}

mapfile -t wanted < <(missing)
[ "${#wanted[@]}" -eq 0 ] && exit 0

sudo=""
can_install=false
if [ -z "${FLOTILLA_ABSENT_TOOLS:-}" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    can_install=true
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
    can_install=true
  fi
fi

if [ "$can_install" = true ]; then
  packages=()
  for tool in "${wanted[@]}"; do read -ra more <<<"$(packages_of "$tool")"; packages+=("${more[@]}"); done
  echo "flotilla tests: installing ${packages[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  mapfile -t wanted < <(missing)
  [ "${#wanted[@]}" -eq 0 ] && exit 0
fi

for tool in "${wanted[@]}"; do
  echo "flotilla tests: no $tool: its tests are skipped; install it with: sudo apt-get install -y $(packages_of "$tool")"
done
if [ "${CI:-}" = true ]; then
  echo "flotilla tests: CI=true and ${wanted[*]} missing: nothing may be skipped in CI" >&2
  exit 1
fi
