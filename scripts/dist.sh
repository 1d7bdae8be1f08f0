#!/usr/bin/env bash
# The release artifact: the retry binary people download, built with the
# `dist` profile (Cargo.toml) for a target named explicitly.
#
#   bash scripts/dist.sh            # the host's target; on x86_64 Linux the static glibc binary
#   bash scripts/dist.sh TARGET     # another target triple (the release workflow's)
#   bash scripts/dist.sh --docs DIR # only what goes beside the binary, into DIR (the
#                                   # Windows .zip's, and the tests')
#   bash scripts/dist.sh --install-script URL DIR
#                                   # scripts/install.sh pointed at the release
#                                   # whose files are at URL, as DIR/install.sh,
#                                   # with DIR/install.sh.sha256 (release.yml's;
#                                   # the README's snippets check it before running it)
#
# Writes
#   target/TARGET/dist/retry                             the binary
#   target/artifacts/retry-VERSION-TARGET.tar.gz         it, README.md, docs/ (which the README links), completions/,
#                                                        man/retry.1, LICENSE-MIT and LICENSE-APACHE
#   target/artifacts/retry-VERSION-TARGET.tar.gz.sha256  for `sha256sum -c`
# (under $CARGO_TARGET_DIR instead of target/ when it is set) and prints
# the binary's path. The plain `cargo build --release` is not
# changed by it: that stays a dynamically linked build for the host, in
# target/release/retry.
#
# Linux targets are linked statically (glibc's or musl's libc in the binary)
# and not position-independent: no dynamic loader and no start-up relocation
# pass, which is what keeps start-up and memory at bench/RESULTS.md's figures.
# Those flags go in RUSTFLAGS, which with --target reach only the target's
# crates: crt-static on the host's build scripts and proc-macros (clap's
# derive) would break them. macOS has no static libc: its build is plain.
#
# The tarball is reproducible: the same commit gives the same bytes. Its
# entries are sorted, owned by 0:0, with modes from the permission bits
# alone and every mtime at SOURCE_DATE_EPOCH (by default the commit's time),
# and gzip stores no name or time. That takes GNU tar (`gtar` on macOS).
set -euo pipefail
cd "$(dirname "$0")/.."

# What goes beside the binary, into $1: the README, the documents it links
# to, the completions, the man page and the licenses. The archive stands
# alone: a link in its documents to a file it does not hold (CONTRIBUTING.md,
# bench/, the workflows: for whoever works on the source) becomes its plain
# text, so a reader of the archive never follows a link to nothing. perl,
# which every Unix and Git for Windows' bash have, does the rewriting.
docs() {
    local dir=$1 doc
    mkdir -p "$dir/completions" "$dir/man" "$dir/docs"
    cp completions/* "$dir/completions/"
    cp man/retry.1 "$dir/man/"
    cp LICENSE-MIT LICENSE-APACHE "$dir/"
    cp docs/*.md "$dir/docs/"
    cp "${DIST_README:-README.md}" "$dir/README.md"
    for doc in "$dir/README.md" "$dir"/docs/*.md; do
        # Each link is resolved from its own document's folder.
        BASE=$(dirname "$doc") perl -pi -e '
            s{\[([^\]]*)\]\(([^)#\s:]+)(#[^)]*)?\)}{-e "$ENV{BASE}/$2" ? $& : $1}ge
        ' "$doc"
    done
}

# install.sh with the release's URL written in, and its checksum.
install_script() {
    local url=$1 dir=$2
    case $url in
    *"'"* | *"|"* | "") echo "dist: --install-script: not a URL: '$url'" >&2; exit 2 ;;
    esac
    mkdir -p "$dir"
    sed "s|^RETRY_RELEASE_URL=''\$|RETRY_RELEASE_URL='$url'|" scripts/install.sh >"$dir/install.sh"
    grep -qxF "RETRY_RELEASE_URL='$url'" "$dir/install.sh" ||
        { echo "dist: scripts/install.sh has no RETRY_RELEASE_URL='' line to fill" >&2; exit 1; }
    (
        cd "$dir"
        if command -v sha256sum >/dev/null 2>&1; then
            sha256sum install.sh
        else
            shasum -a 256 install.sh # macOS
        fi
    ) >"$dir/install.sh.sha256"
}

if [ "${1:-}" = --install-script ]; then
    [ $# -eq 3 ] || { echo "usage: bash scripts/dist.sh --install-script URL DIR" >&2; exit 2; }
    dir=$3
    case $dir in /*) ;; *) dir=$OLDPWD/$dir ;; esac
    install_script "$2" "$dir"
    exit 0
fi

if [ "${1:-}" = --docs ]; then
    [ $# -eq 2 ] || { echo "usage: bash scripts/dist.sh --docs DIR" >&2; exit 2; }
    docs "$2"
    exit 0
fi

# ---- names: the rule tests/integration/install.rs holds to release.yml ----
# The archive's name (scripts/install.sh downloads it by the same rule).
archive_for() { echo "retry-$1-$2.tar.gz"; }
# ---- end of names ----

if [ $# -gt 1 ]; then
    echo "usage: bash scripts/dist.sh [TARGET]" >&2
    exit 2
fi
# DIST_PREBUILT_STD=1 links the prebuilt std (below); any other word is
# refused before anything is built.
case ${DIST_PREBUILT_STD:-} in
"" | 0) prebuilt_std=false ;;
1) prebuilt_std=true ;;
*) echo "dist: DIST_PREBUILT_STD=${DIST_PREBUILT_STD}: give 1 (link the prebuilt std) or 0" >&2; exit 2 ;;
esac
host=$(rustc -vV | sed -n 's/^host: //p')
target=${1:-$host}

case $target in
    *-linux-gnu* | *-linux-musl*) flags="-C target-feature=+crt-static -C relocation-model=static" ;;
    *) flags="" ;;
esac

rustup target list --installed 2>/dev/null | grep -qx "$target" ||
    rustup target add "$target" >&2 ||
    echo "dist: could not add the $target target; trying the build anyway" >&2

# Linux: std built from its source with the binary (issue 45), without its
# `backtrace` feature and without unwind tables. Under panic = "abort" a
# stripped binary has no symbols to print a backtrace with, yet std's
# prebuilt printer (gimli, addr2line, miniz_oxide) and the tables it reads
# were 0.54 MiB of the musl artifact's 2.37, and pages of its peak RSS. A
# panic still prints its message and location; RUST_BACKTRACE prints
# nothing more. This takes the rust-src component and cargo's unstable
# -Z build-std, allowed on the stable toolchain by RUSTC_BOOTSTRAP=1 for
# this build alone: the compiler and std's source stay those of the stable
# release everything else is built and tested with. Without std's source
# (a toolchain not from rustup), or with DIST_PREBUILT_STD=1 (should a
# stable release ever refuse the flag), the prebuilt std is linked: the
# binary works the same and is 0.5 MiB larger, which the size budget
# (scripts/size-budget.sh) catches in CI.
build_std=()
# RUSTC_BOOTSTRAP=1 for the cargo build alone (`env`, not exported), so
# nothing else the script runs sees it.
bootstrap=()
if [ -n "$flags" ] && $prebuilt_std; then
    echo "dist: DIST_PREBUILT_STD=1: linking the prebuilt std" >&2
elif [ -n "$flags" ]; then
    std_source="$(rustc --print sysroot)/lib/rustlib/src/rust/library"
    [ -d "$std_source" ] || rustup component add rust-src >&2 || true
    if [ -d "$std_source" ]; then
        flags="$flags -C force-unwind-tables=no"
        build_std=(-Z build-std=std,panic_abort -Z build-std-features=)
        bootstrap=(RUSTC_BOOTSTRAP=1)
    else
        echo "dist: no std source (rustup component add rust-src): linking the prebuilt std" >&2
    fi
fi

# No path of the build machine in the binary (panic locations, debug
# paths): the checkout becomes `retry`, cargo's registry `cargo`, and std's
# source (built here, above) `/rustc/COMMIT`, as in rustup's prebuilt std.
# Without this the musl artifact held 92 absolute paths, which also made
# its bytes depend on where it was built. The flags go to cargo as
# CARGO_ENCODED_RUSTFLAGS (words separated by 0x1f), so a path with a
# space in it is one word all the same; rustc splits each pair at its
# last `=`, and no replacement here holds one, so a path may too. (As
# RUSTFLAGS such a path was left unremapped, and with std built here
# that put the sysroot's path in the binary.)
# A rustc built without git says `commit-hash: unknown`; one that names
# none at all gets the same word, not an empty one.
commit=$(rustc -vV | sed -n 's/^commit-hash: //p')
# shellcheck disable=SC2206 # $flags: fixed words, split on purpose
rustflags=($flags)
for pair in "$PWD=retry" "${CARGO_HOME:-$HOME/.cargo}=cargo" \
    "$(rustc --print sysroot)/lib/rustlib/src/rust=/rustc/${commit:-unknown}"; do
    rustflags+=("--remap-path-prefix=$pair")
done
encoded=$(IFS=$'\x1f' && echo "${rustflags[*]}")
CARGO_ENCODED_RUSTFLAGS=$encoded env ${bootstrap[@]+"${bootstrap[@]}"} \
    cargo build --locked --profile dist --target "$target" ${build_std[@]+"${build_std[@]}"}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
dir=${CARGO_TARGET_DIR:-target}
bin="$dir/$target/dist/retry"
archive=$(archive_for "$version" "$target")
name=${archive%.tar.gz} # the directory inside it
out=$dir/artifacts
rm -rf "${out:?}/$name"
docs "$out/$name"
cp "$bin" "$out/$name/"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
gnu_tar=tar
command -v gtar >/dev/null 2>&1 && gnu_tar=gtar
if ! "$gnu_tar" --version 2>/dev/null | grep -q 'GNU tar'; then
    echo "dist: GNU tar is needed for a reproducible tarball (on macOS: brew install gnu-tar)" >&2
    exit 1
fi
"$gnu_tar" -C "$out" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
    --mode='u+rwX,go+rX,go-w' --mtime="@$epoch" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
rm -rf "${out:?}/$name"
(
    cd "$out"
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$name.tar.gz"
    else
        shasum -a 256 "$name.tar.gz" # macOS
    fi
) >"$out/$name.tar.gz.sha256"

echo "dist: $out/$name.tar.gz" >&2
cat "$out/$name.tar.gz.sha256" >&2
echo "$bin"
