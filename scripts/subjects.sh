#!/usr/bin/env bash
# Commit subjects of 72 characters or fewer, so `git log --oneline` reads
# as a changelog (CONTRIBUTING.md). Checks the commits after SINCE (by
# default bfef3c5, the last commit before the rule was enforced; older
# subjects stay as they were written). A clone without SINCE (a shallow
# one) has nothing to compare against, and says so.
#
#   bash scripts/subjects.sh [SINCE]
set -euo pipefail
since=${1:-bfef3c5}
if ! git rev-parse -q --verify "$since^{commit}" >/dev/null; then
    echo "subjects: $since is not in this clone: not checked" >&2
    exit 0
fi
long=$(git log --format='%h%x09%s' "$since..HEAD" | awk -F '\t' 'length($2) > 72')
if [ -n "$long" ]; then
    echo "subjects: longer than 72 characters (reword them before they land):" >&2
    echo "$long" >&2
    exit 1
fi
