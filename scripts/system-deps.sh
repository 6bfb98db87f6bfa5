#!/usr/bin/env bash
# Install the real components the test suite starts: PostgreSQL, Chromium, OpenSSH server,
# docker-compose (to validate docker-compose.yml), musl-tools (the static redoprobe build),
# iproute2 and iputils-ping (the lab), poppler-utils (pdftotext, the plan report test), prometheus
# (a real server scrapes /metrics). Debian
# packages; needs root (CI is root).
set -euo pipefail

need=()
command -v chromium >/dev/null || need+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v runuser >/dev/null || need+=(util-linux)
command -v musl-gcc >/dev/null || need+=(musl-tools)
command -v ip >/dev/null || need+=(iproute2)          # the lab: namespaces, veth, bridge
command -v ping >/dev/null || need+=(iputils-ping)    # the lab's RTT checks
command -v iperf3 >/dev/null || need+=(iperf3)          # imports of real iperf3 -J output; the probe benchmark
command -v pdftotext >/dev/null || need+=(poppler-utils)  # the plan report test reads the PDF's text
command -v prometheus >/dev/null || need+=(prometheus)  # scrapes /metrics in the metrics test

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "system-deps: missing ${need[*]}; install them with your package manager (as root: apt-get install ${need[*]})." >&2
  echo "system-deps: tests that need them are skipped locally, and fail when CI is set." >&2
  exit 0
fi
echo "system-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# unsafe-io: no fsync per file while unpacking (a machine that loses power mid-install reinstalls anyway)
apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${need[@]}" >/dev/null
# The Debian package starts a cluster of its own; the tests start their own server instead.
if command -v pg_lsclusters >/dev/null; then
  pg_lsclusters -h 2>/dev/null | while read -r version cluster _; do
    pg_ctlcluster "$version" "$cluster" stop 2>/dev/null || true
  done
fi
