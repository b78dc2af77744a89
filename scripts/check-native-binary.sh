#!/usr/bin/env bash
# Check a built Node addon before it is packed: the architecture its Rust target names, no
# OpenSSL among its dynamic dependencies (it is linked statically), and for glibc targets
# no glibc symbol version above the floor (STEADFAST_GLIBC_FLOOR, default 2.17: CentOS 7,
# Amazon Linux 2 and everything newer; the cross toolchain links against glibc 2.17).
#
#   ./scripts/check-native-binary.sh target/npm-build/linux-x64-gnu/steadfast.linux-x64-gnu.node x86_64-unknown-linux-gnu
set -euo pipefail

file=${1:?usage: check-native-binary.sh <file.node> <rust target triple>}
target=${2:?usage: check-native-binary.sh <file.node> <rust target triple>}
floor=${STEADFAST_GLIBC_FLOOR:-2.17}

fail() {
	echo "check-native-binary: $file: $*" >&2
	exit 1
}

case "$target" in
x86_64-*) want="Advanced Micro Devices X86-64" ;;
aarch64-*) want="AArch64" ;;
*) fail "no architecture known for target $target" ;;
esac
machine=$(readelf -h "$file" | sed -n 's/^ *Machine: *//p')
echo "    architecture: $machine"
[[ $machine == "$want" ]] || fail "architecture is $machine, $target needs $want"

mapfile -t needed < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "    dynamic dependencies: ${needed[*]}"
for lib in "${needed[@]}"; do
	[[ $lib == libssl.* || $lib == libcrypto.* ]] && fail "links $lib dynamically (OpenSSL must be linked statically)"
done

highest=$(readelf -V --wide "$file" | { grep -o 'GLIBC_[0-9][0-9.]*' || true; } | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
case "$target" in
*-linux-gnu)
	[[ -n $highest ]] || fail "no GLIBC symbol versions: is this a glibc build?"
	echo "    highest GLIBC symbol version: $highest (floor $floor)"
	[[ $(printf '%s\n%s\n' "$highest" "$floor" | sort -V | tail -n 1) == "$floor" ]] ||
		fail "needs GLIBC $highest, newer than the floor $floor"
	;;
*-linux-musl)
	[[ -z $highest ]] || fail "a musl build refers to GLIBC_$highest"
	echo "    libc: musl (no GLIBC symbol versions)"
	;;
esac
