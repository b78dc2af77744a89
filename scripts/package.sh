#!/usr/bin/env bash
# Build the published Node addon for the Linux targets asked for, check each binary, and
# write every installable tarball (the root package and one package per built platform) to
# target/npm-pack/.
#
#   ./scripts/package.sh               # linux-x64-gnu (what CI packs, installs and tests)
#   ./scripts/package.sh --all         # every Linux target in package.json "napi.targets"
#   ./scripts/package.sh --target aarch64-unknown-linux-gnu [--target ...]
#
# Release profile `dist` (LTO, one codegen unit, stripped), OpenSSL linked statically
# (feature `vendored-openssl`). glibc targets link against glibc 2.17 with napi-rs's
# prebuilt cross toolchain (npm: @napi-rs/cross-toolchain); musl targets build with
# cargo-zigbuild and zig (PyPI: ziglang), both installed here when missing. Standard
# libraries of other targets come from `rustup target add`. macOS and Windows binaries are
# built on hosted runners (.github/workflows/release.yml), not here.
#
# Each binary is checked by scripts/check-native-binary.sh (architecture, no OpenSSL among
# its dynamic dependencies, glibc floor). The root tarball lists the platform packages of
# this pack as optionalDependencies, as `napi prepublish` would at publish time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

targets=()
while (($#)); do
	case "$1" in
	--all) mapfile -t targets < <(node -p "require('./package.json').napi.targets.filter((t) => t.includes('-linux-')).join('\n')") ;;
	--target)
		targets+=("${2:?--target needs a Rust target triple}")
		shift
		;;
	*)
		echo "package.sh: unknown argument $1 (see the comment at the top of the script)" >&2
		exit 2
		;;
	esac
	shift
done
((${#targets[@]})) || targets=(x86_64-unknown-linux-gnu)

[[ -d node_modules ]] || npm ci --no-audit --no-fund
out=target/npm-pack
build=target/npm-build
rm -rf "$out" "$build"
mkdir -p "$out" "$build"

# napi's --use-napi-cross unpacks @napi-rs/cross-toolchain-<host>-target-<arch> at the version
# of its own @napi-rs/cross-toolchain into ~/.napi-rs/cross-toolchain/<version>/<target>, and
# skips that when the folder is there. Not every target is published at every version
# (x64-target-aarch64 has 1.0.3 and no 1.0.0): stage the newest release of the same major.
stage_cross_toolchain() {
	local target=$1 version host pkg dir pick tmp
	version=$(node -p "const cli = require('path').dirname(require.resolve('@napi-rs/cli/package.json'));
		require(require.resolve('@napi-rs/cross-toolchain/package.json', { paths: [cli] })).version")
	host=$(node -p process.arch)
	pkg="@napi-rs/cross-toolchain-$host-target-${target%%-*}"
	dir="$HOME/.napi-rs/cross-toolchain/$version/$target"
	[[ -f $dir/package.json ]] && return
	[[ -n $(npm view "$pkg@$version" version 2>/dev/null) ]] && return
	pick=$(npm view "$pkg@^${version%%.*}" version --json | node -p 'const v = JSON.parse(require("fs").readFileSync(0)); [].concat(v).pop()')
	echo "    $pkg@$version is not published; staging $pick"
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "$pkg@$pick" >/dev/null && tar xzf ./*.tgz)
	mkdir -p "$dir"
	tar xJf "$tmp/package/$target.tar.xz" -C "$dir"
	rm -rf "$tmp"
}

version=$(node -p "require('./package.json').version")
platforms=()
for target in "${targets[@]}"; do
	platform=$(node -p "require('./lib/platforms.js').platformOfTarget('$target')")
	echo "==> $target ($platform)"
	rustup target list --installed | grep -qx "$target" || rustup target add "$target"
	cross=()
	case "$target" in
	*-linux-gnu)
		stage_cross_toolchain "$target"
		cross=(--use-napi-cross)
		;;
	*-linux-musl)
		python3 -c 'import ziglang' 2>/dev/null || python3 -m pip install --quiet ziglang
		command -v cargo-zigbuild >/dev/null || cargo install --locked --quiet cargo-zigbuild
		cross=(--cross-compile)
		;;
	*)
		echo "package.sh: $target is not built on this machine (see .github/workflows/release.yml)" >&2
		exit 2
		;;
	esac
	npx napi build --platform --profile dist --features vendored-openssl --target "$target" \
		"${cross[@]}" --output-dir "$build/$platform" --no-js
	binary="$build/$platform/steadfast.$platform.node"
	./scripts/check-native-binary.sh "$binary" "$target"
	echo "    size: $(stat -c %s "$binary") bytes"

	# The platform package: npm/<platform>/package.json (kept in step by `napi version`).
	pkg="$build/pkg-$platform"
	mkdir -p "$pkg"
	cp "npm/$platform/package.json" "npm/$platform/README.md" LICENSE "$pkg/"
	cp "$binary" "$pkg/"
	(cd "$pkg" && npm pack --silent --pack-destination "$OLDPWD/$out" >/dev/null)
	platforms+=("$platform")
done

# The root package, staged with the optional dependencies on this pack's platform packages.
root="$build/root"
mkdir -p "$root"
node -e '
const fs = require("fs")
const pkg = require("./package.json")
const [root, version, ...platforms] = process.argv.slice(1)
pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [`${pkg.napi.binaryName}-${p}`, version]))
delete pkg.devDependencies
delete pkg.scripts
fs.writeFileSync(`${root}/package.json`, JSON.stringify(pkg, null, 2) + "\n")
// Exactly the files npm would pack from here ("files" entries may be globs).
const listed = JSON.parse(require("child_process").execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" }))[0].files
for (const { path } of listed) if (path !== "package.json") fs.cpSync(path, `${root}/${path}`)
' "$root" "$version" "${platforms[@]}"
(cd "$root" && npm pack --silent --pack-destination "$OLDPWD/$out" >/dev/null)

echo "==> tarballs in $out:"
ls -l "$out"
