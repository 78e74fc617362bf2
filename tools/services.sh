#!/usr/bin/env bash
# The machine's services the tests and the storage target use, installed where missing, once per
# .venv (Makefile: `make test` and `make run` call it, so the README's commands and .ci/run set up
# the same machine). Usage: tools/services.sh VENV [slurm] [xrootd] [toxiproxy]
#   slurm      a real one-node SLURM on localhost for tests/workflow/test_slurm.py (Debian
#              packages, ~10 s); once installed, VENV/.hepfmt-slurm tells `make test` to require
#              it (HEPFMT_REQUIRE_SLURM: a cluster that does not start is a failure, not a skip)
#   xrootd     Debian's XRootD server (its HTTP interface is in the plugins package): the storage
#              target's lan and wan profiles and tests/measure/test_storage.py serve files with it
#   toxiproxy  Shopify's toxiproxy 2.5.0, built with the machine's Go into VENV/bin: the wan link
# Installing needs root and apt-get; without them each missing service is named and its tests
# skip with the reason (never silently).
set -uo pipefail
venv=$1
shift
export PATH="$PATH:/usr/sbin:/sbin"  # where Debian puts the daemons
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
updated=
apt_install() {  # what: packages...
  local what=$1
  shift
  if ! can_apt; then
    echo "services: $what is not installed and cannot be here (root and apt-get needed): its tests skip"
    return 1
  fi
  echo "services: installing $what: $*"
  if [ -z "$updated" ]; then apt-get update -qq >/dev/null && updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
    || { echo "services: could not install $what: its tests skip"; return 1; }
}
for service in "$@"; do
  case $service in
  slurm)
    if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
      apt_install SLURM slurmctld slurmd slurm-client munge
    fi
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && [ "$(id -u)" = 0 ]; then
      touch "$venv/.hepfmt-slurm"
    fi
    ;;
  xrootd)
    command -v xrootd >/dev/null || apt_install XRootD xrootd-server xrootd-server-plugins
    ;;
  toxiproxy)
    if [ ! -x "$venv/bin/toxiproxy-server" ]; then
      if command -v go >/dev/null; then
        echo "services: building toxiproxy 2.5.0 for the wan profile"
        gobin=$(mktemp -d)
        GOBIN="$gobin" timeout 600 go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0 \
          && mv "$gobin/server" "$venv/bin/toxiproxy-server" \
          || echo "services: could not build toxiproxy: the wan profile and its test skip"
        rm -rf "$gobin"
      else
        echo "services: no Go to build toxiproxy with: the wan profile and its test skip"
      fi
    fi
    ;;
  *)
    echo "services: unknown service $service" >&2
    exit 2
    ;;
  esac
done
exit 0
