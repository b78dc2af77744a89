#!/usr/bin/env bash
# Build and pack another Linux architecture's packages (./scripts/package.sh --target T),
# install them as a user there would, and run the README's quickstarts with that
# architecture's Node under qemu user-mode emulation (__test__/emulated/install.test.mjs).
#
#   ./scripts/emulated-install-test.sh        # aarch64-unknown-linux-gnu (linux-arm64-gnu)
#
# Not part of ./scripts/test.sh (the cross build alone takes minutes). Set-up, as root, on
# Debian 12: qemu-user, and the target's C libraries and Node's shared libraries from Debian's
# multiarch packages (apt); Node itself is Debian's nodejs 18 for that architecture,
# unpacked under target/emulated/<arch>/ and not installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=${1:-aarch64-unknown-linux-gnu}
case "$target" in
aarch64-unknown-linux-gnu) arch=arm64 qemu=qemu-aarch64 triplet=aarch64-linux-gnu ;;
*)
	echo "emulated-install-test.sh: no emulated run for $target" >&2
	exit 2
	;;
esac

root="$PWD/target/emulated/$arch"
if [[ ! -x $root/usr/bin/node ]]; then
	command -v "$qemu" >/dev/null || apt-get install -y -q qemu-user
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		dpkg --add-architecture "$arch"
		apt-get update -q
	fi
	apt-get install -y -q "libc6:$arch" "libstdc++6:$arch" "libgcc-s1:$arch" "libbrotli1:$arch" \
		"libc-ares2:$arch" "libicu72:$arch" "libnghttp2-14:$arch" "libssl3:$arch" "libuv1:$arch" "zlib1g:$arch"
	debs=$(mktemp -d)
	# Debian's node loads these bundled JS modules from /usr/share/nodejs (qemu -L finds them under $root).
	(cd "$debs" && apt-get download "nodejs:$arch" "libnode108:$arch" node-acorn node-cjs-module-lexer node-undici node-busboy)
	mkdir -p "$root"
	for deb in "$debs"/*.deb; do dpkg -x "$deb" "$root"; done
	rm -rf "$debs"
fi

./scripts/package.sh --target "$target"
platform=$(node -p "require('./lib/platforms.js').platformOfTarget('$target')")
STEADFAST_EMULATED_PLATFORM=$platform \
	STEADFAST_EMULATED_NODE="$qemu -L $root -E LD_LIBRARY_PATH=$root/usr/lib/$triplet $root/usr/bin/node" \
	node --test --test-timeout=900000 __test__/emulated/
