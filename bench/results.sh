# shellcheck shell=bash
# Sourced by the benches that write a section of bench/RESULTS.md.
#
#   section | replace_section FILE HEAD
#
# writes FILE anew: every section but the one whose heading line starts
# with HEAD (`## ` and its first words), trailing blank lines dropped,
# then a blank line and stdin, the section as this run wrote it. FILE
# need not exist. The new file is written beside it and moved over it, so
# an interrupted bench leaves the old one whole.
replace_section() {
    local file=$1 head=$2
    {
        if [ -f "$file" ]; then
            awk -v head="$head" 'index($0, head) == 1 { skip = 1; next } /^## / { skip = 0 } !skip' "$file" |
                sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
        fi
        echo
        cat
    } >"$file.new"
    mv "$file.new" "$file"
}
