# Sourced by .ci/run, .ci/windows and .ci/cross: apt_install PACKAGE...
# installs Debian packages (one `apt-get update`, then `install`), with
# apt-get itself as root (a container) and through sudo otherwise: GitHub's
# runners run jobs as the user `runner`, with passwordless sudo. `sudo -n`
# fails instead of asking for a password.
# shellcheck shell=bash
apt_install() {
    local as_root=""
    if [[ $(id -u) != 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "ci: cannot install $*: not root, and no sudo" >&2
            return 1
        fi
        as_root="sudo -n"
    fi
    # shellcheck disable=SC2086 # $as_root is empty or two words
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
