#!/usr/bin/env bash
# deb-check.sh — the Debian package on a fresh Debian 12: builds it
# (cpack -G DEB in build/), makes a minimal bookworm root with debootstrap in
# build-deb-root/ (once; it downloads about 40 MB from the Debian mirror),
# installs the package there with apt (which fetches its Depends), and runs
# fasim: --version, the classroom report, the man page and completion files,
# and fasim gpu without a GPU (it must refuse and name --backend cpu).
# Needs root and network access to deb.debian.org.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh debootstrap dpkg-dev file
(cd build && rm -f fasim_*.deb && cpack -G DEB >/dev/null)
deb=$(ls build/fasim_*_amd64.deb)
root=build-deb-root
[ -x "$root/usr/bin/apt-get" ] || debootstrap --variant=minbase bookworm "$root" \
    http://deb.debian.org/debian >/dev/null
cp "$deb" "$root/tmp/fasim.deb"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive /bin/bash -euc '
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends /tmp/fasim.deb >/dev/null
  fasim --version
  fasim --N 1024 --M 96K | sed -n 1,2p
  test -f /usr/share/man/man1/fasim.1.gz
  test -f /usr/share/bash-completion/completions/fasim
  if fasim gpu --N 64 2>/tmp/gpu.err; then echo "fasim gpu ran without a GPU?"; exit 1; fi
  grep -q -- "--backend cpu" /tmp/gpu.err
  apt-get remove -y -q fasim >/dev/null 2>&1   # (apt warns that /dev/pts is absent)
  echo "deb-check: installed, ran and removed on a fresh Debian 12"'
