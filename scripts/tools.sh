#!/usr/bin/env bash
# tools.sh (make tools): installs what the tests need from Debian's packages
# when root and missing: qemu-user-static (qemu-aarch64-static and
# qemu-riscv64-static), binutils-aarch64-linux-gnu and librsvg2-bin
# (rsvg-convert). Not root, it installs nothing and says so loudly.
#
# qemu-riscv64-static must be 8.1 or later: 7.2 (Debian 12's) can abort an
# RVV binary, depending on its code layout, with "decode_save_opc: Assertion
# `ctx->insn_start != NULL' failed" (qemu issue 1441, fixed in 8.1). On
# Debian 12 (bookworm) qemu-user-static comes from bookworm-backports
# (10.0); later releases have a recent enough one.
set -euo pipefail

# qemu_ok: both qemus are there and qemu-riscv64-static is 8.1 or later.
qemu_ok() {
	command -v qemu-aarch64-static >/dev/null 2>&1 || return 1
	command -v qemu-riscv64-static >/dev/null 2>&1 || return 1
	local v major minor
	v=$(qemu-riscv64-static --version 2>/dev/null | sed -n '1s/^.* version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*$/\1 \2/p')
	read -r major minor <<<"$v" || return 1
	[ -n "${minor:-}" ] || return 1
	[ "$major" -gt 8 ] || { [ "$major" -eq 8 ] && [ "$minor" -ge 1 ]; }
}

need=() old=""
if ! qemu_ok; then
	need+=(qemu-user-static)
	if command -v qemu-aarch64-static >/dev/null 2>&1 && command -v qemu-riscv64-static >/dev/null 2>&1; then
		old=$(qemu-riscv64-static --version 2>&1 | head -1)
	fi
fi
command -v aarch64-linux-gnu-as >/dev/null 2>&1 || need+=(binutils-aarch64-linux-gnu)
command -v rsvg-convert >/dev/null 2>&1 || need+=(librsvg2-bin)
[ ${#need[@]} -gt 0 ] || exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	if [ -n "$old" ]; then
		echo "################################################################"
		echo "## $old: older than 8.1, it can abort"
		echo "## an RVV test binary (qemu issue 1441). Run 'make tools' as root"
		echo "## to install qemu-user-static 8.1 or later."
		echo "################################################################"
		need=("${need[@]:1}")
	fi
	if [ ${#need[@]} -gt 0 ]; then
		echo "== not root: cannot install ${need[*]} (arm64 and riscv64 tests, or the SVG rendering test, will be skipped)"
	fi
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
echo "== installing ${need[*]}"
apt-get update -qq
rest=()
for p in "${need[@]}"; do
	[ "$p" = qemu-user-static ] || rest+=("$p")
done
if [ ${#rest[@]} -gt 0 ]; then
	apt-get install -y -qq "${rest[@]}" >/dev/null
fi
if [ ${#rest[@]} -lt ${#need[@]} ]; then
	if [ "$codename" = bookworm ]; then
		# Debian 12's qemu is 7.2: take bookworm-backports' (there
		# qemu-user-static is links to qemu-user's static binaries, and
		# pulls in qemu-user-binfmt, which recommends systemd: not from
		# backports, and not needed, the tests run qemu themselves).
		# The mirror is the one the machine's bookworm entry names.
		if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
			mirror=$(sed -n 's|^URIs: *\(https\{0,1\}://[^ ]*/debian\)/\{0,1\} *$|\1|p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
			[ -n "$mirror" ] || mirror=$(sed -n 's|^deb \(https\{0,1\}://[^ ]*/debian\)/\{0,1\} bookworm .*$|\1|p' /etc/apt/sources.list 2>/dev/null | head -1)
			echo "deb ${mirror:-http://deb.debian.org/debian} bookworm-backports main" >/etc/apt/sources.list.d/bookworm-backports.list
			apt-get update -qq || echo "## apt-get update failed (bookworm-backports unreachable?)"
		fi
		# Without backports, Debian 12's own qemu still runs the tests
		# (the warning below says what that risks).
		apt-get install -y -qq --no-install-recommends -t bookworm-backports qemu-user-static >/dev/null ||
			apt-get install -y -qq qemu-user-static >/dev/null
	else
		apt-get install -y -qq qemu-user-static >/dev/null
	fi
	echo "== $(qemu-riscv64-static --version | head -1)"
	if ! qemu_ok; then
		echo "## WARNING: qemu-riscv64-static older than 8.1 (qemu issue 1441: it can abort an RVV test binary)"
	fi
fi
