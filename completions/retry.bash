_retry() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="retry"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        retry)
            opts="-j -b -c -f -n -t -m -q -v -s -h -V --jitter --base --cap --factor --max-attempts --retry-on --fatal-on --success-on --timeout --kill-after --max-time --seed --log-format --log-file --quiet --verbose --on-retry --stdin --stdin-limit --stdout-once --retry-if-output --stop-if-output --shell --foreground --plan --simulate --completions --man --format --clients --reps --net-delay --net-sd --svg --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jitter)
                    COMPREPLY=($(compgen -W "none full equal decorrelated all" -- "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -W "none full equal decorrelated all" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-attempts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fatal-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --success-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "auto text json github" -- "${cur}"))
                    return 0
                    ;;
                --log-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --on-retry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stdin)
                    COMPREPLY=($(compgen -W "inherit replay null" -- "${cur}"))
                    return 0
                    ;;
                --stdin-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-if-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-if-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --foreground)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --completions)
                    COMPREPLY=($(compgen -W "bash elvish fish powershell zsh" -- "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table csv json" -- "${cur}"))
                    return 0
                    ;;
                --clients)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --net-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --net-sd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --svg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _retry -o nosort -o bashdefault -o default retry
else
    complete -F _retry -o bashdefault -o default retry
fi
