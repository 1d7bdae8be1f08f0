#!/usr/bin/env bash
# verify.sh: runs the real programs against servers on 127.0.0.1 through
# retry, with each preset's flags as that retry prints them (`retry
# --presets NAME`: its built-in presets, so a change to
# src/preset/builtin.ini is tested once built), and prints a table:
# preset, case, expected, attempts seen, exit code, PASS/FAIL.
#
#   bash verify.sh [-v] [PRESET...]     (default: every preset it can run here)
#
#   -v        after the table, each case's command and the command's stderr
#   RETRY        the retry binary (default: target/debug/retry of this checkout)
#
# Every case runs `retry -v -n 3 --base 1ms` (plus the preset's flags), so
#   retried   = 3 attempts (the preset kept retrying)
#   stopped   = 1 attempt  (the preset stopped at once)
#   succeeded = 1 attempt, exit 0;  recovered = 2 attempts, exit 0
#   +hint     = and the sleep came from the server's Retry-After (JSON log),
#               so the retry was throttled
#   +throttled = and the preset's throttle line classed the retry throttled
#   (a retried case with neither must be transient: no `"class":"throttled"`)
# and the exit code must be the one in the table's "want" column.
#
# Loopback only: every server binds 127.0.0.1; the DNS cases run in a
# private network namespace (unshare) whose only resolver is a stub on its
# own 127.0.0.1. Servers are stopped on every exit path (trap), and each has
# a lifetime of its own as a backstop; every case is bounded by `timeout`.
# The work directory (mktemp -d) is removed at the end.
# Needs: python3, and for each preset its program (missing ones are SKIPped);
# sshd, rsync --daemon, git daemon, unshare and root for some cases.

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RETRY=${RETRY:-$(cd "$(dirname "$0")/../.." && pwd)/target/debug/retry}
VERBOSE=0
if [ "${1:-}" = -v ]; then VERBOSE=1; shift; fi
WANT=("$@")
LIFE=900      # seconds any server may live, whatever happens to this script
CASE_LIMIT=90 # seconds one case may take

[ -x "$RETRY" ] || { echo "verify.sh: no retry binary at $RETRY (cargo build)" >&2; exit 2; }
# shellcheck source=bench/presets/tests/preset_flags.sh
. "$HERE/tests/preset_flags.sh"
command -v python3 >/dev/null || { echo "verify.sh: needs python3" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/presets-verify.XXXXXX")
PIDS=()
MADE_RUN_SSHD=0
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  [ "$MADE_RUN_SSHD" = 1 ] && rmdir /run/sshd 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

have() { command -v "$1" >/dev/null 2>&1; }
wanted() { [ ${#WANT[@]} -eq 0 ] && return 0; local w; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_file() { local i; for i in $(seq 50); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_port() { # PORT: until something accepts on 127.0.0.1:PORT (5 s at most)
  python3 - "$1" <<'EOF'
import socket, sys, time
for _ in range(50):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close(); sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
EOF
}
# start NAME CMD...: runs a server in the background, bounded by $LIFE, remembered for cleanup
start() { local name=$1; shift; timeout "$LIFE" "$@" >"$W/$name.log" 2>&1 </dev/null & PIDS+=($!); }

# ---------------------------------------------------------------- servers
HELPERS=$HERE/helpers
mkdir -p "$W/root"
start http python3 "$HELPERS/httpstub.py" "$W/http.port" "$LIFE" "$W/root"
start slam python3 "$HELPERS/tcpstub.py" slam "$W/slam.port" "$LIFE"
start eof python3 "$HELPERS/tcpstub.py" eof "$W/eof.port" "$LIFE"
start mute python3 "$HELPERS/tcpstub.py" mute "$W/mute.port" "$LIFE"
start full python3 "$HELPERS/tcpstub.py" full "$W/full.port" "$LIFE"
for f in http slam eof mute full; do wait_file "$W/$f.port" || { echo "verify.sh: the $f stub did not start" >&2; exit 1; }; done
HP=$(cat "$W/http.port") SLAM=$(cat "$W/slam.port") EOFP=$(cat "$W/eof.port") MUTE=$(cat "$W/mute.port") FULL=$(cat "$W/full.port")
# a port nothing listens on: bound once, then closed
CLOSED=$(free_port)
H=http://127.0.0.1:$HP

NETNS=0
if [ "$(id -u)" = 0 ] && have unshare && unshare --net --mount true 2>/dev/null; then NETNS=1; fi
echo "nameserver 127.0.0.1" >"$W/resolv.conf"
# in_ns MODE CMD...: CMD in a new network namespace (loopback only) whose
# resolver answers every name NXDOMAIN (nx) or SERVFAIL (servfail)
in_ns() {
  local mode=$1; shift
  unshare --net --mount sh -c '
    ip link set lo up 2>/dev/null || true
    mount --bind "$1" /etc/resolv.conf
    python3 "$2" "$3" 60 >/dev/null 2>&1 &
    dns=$!
    sleep 0.5
    shift 3
    "$@"
    rc=$?
    kill "$dns" 2>/dev/null
    exit "$rc"' sh "$W/resolv.conf" "$HELPERS/nxdns.py" "$mode" "$@"
}

# ---------------------------------------------------------------- cases
ROWS=()
NS=""        # set to nx/servfail for a case that runs in in_ns
XARGS=()     # extra retry flags for one case
N=0
# case PRESET NAME EXPECT WANT_CODE -- CMD...
case_() {
  local preset=$1 name=$2 expect=$3 want=$4; shift 5
  N=$((N + 1))
  local log=$W/case$N.json out=$W/case$N.out err=$W/case$N.err flags code attempts verdict hint=""
  preset_flags "$RETRY" "$preset" || flags=()
  local run=("$RETRY" -v -n 3 --base 1ms --log-format json --log-file "$log" "${XARGS[@]}" "${flags[@]}" -- "$@")
  printf '%s\n' "$*" >"$W/case$N.cmd"
  if [ -n "$NS" ]; then
    if [ "$NETNS" = 1 ]; then
      timeout "$CASE_LIMIT" bash -c "$(declare -f in_ns); W='$W' HELPERS='$HELPERS'; in_ns \"\$@\"" _ "$NS" "${run[@]}" >"$out" 2>"$err"; code=$?
    else
      ROWS+=("$preset|$name|$expect|-|-|SKIP (no network namespace)"); NS=""; XARGS=(); return
    fi
  else
    timeout "$CASE_LIMIT" "${run[@]}" >"$out" 2>"$err"; code=$?
  fi
  attempts=$(sed -n 's/.*"attempt":\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
  attempts=${attempts:-0}
  case $expect in
    retried*) [ "$attempts" = 3 ] ;;
    stopped) [ "$attempts" = 1 ] ;;
    succeeded) [ "$attempts" = 1 ] && [ "$code" = 0 ] ;;
    recovered) [ "$attempts" = 2 ] && [ "$code" = 0 ] ;;
  esac
  local ok=$?
  [ "$want" != "*" ] && [ "$code" != "$want" ] && ok=1
  case $expect in *+hint) grep -q '"source":"hint"' "$log" 2>/dev/null || ok=1 ;; esac
  local throttled=1
  grep -q '"class":"throttled"' "$log" 2>/dev/null && throttled=0
  case $expect in
    *+hint|*+throttled) [ $throttled = 0 ] || ok=1 ;;
    retried) [ $throttled = 1 ] || ok=1 ;;
  esac
  if [ $ok = 0 ]; then verdict=PASS; else verdict=FAIL; fi
  ROWS+=("$preset|$name|$expect|$attempts|$code (want $want)|$verdict|$N")
  NS=""; XARGS=()
}
skip() { ROWS+=("$1|${2:-(all)}|-|-|-|SKIP ($3)"); }

# ---- curl
if wanted curl; then if have curl; then
  case_ curl "HTTP 503 (-D /dev/stderr: Retry-After 1)" retried+hint 22 -- curl -fsS -D /dev/stderr -o /dev/null "$H/status/503"
  case_ curl "HTTP 429" retried+throttled 22 -- curl -fsS "$H/status/429"
  case_ curl "HTTP 500" retried 22 -- curl -fsS "$H/status/500"
  case_ curl "HTTP 408" retried 22 -- curl -fsS "$H/status/408"
  case_ curl "HTTP 503 then 200" recovered 0 -- curl -fsS "$H/flaky/curl503/1/503"
  case_ curl "connection refused (7)" retried 7 -- curl -fsS "http://127.0.0.1:$CLOSED/"
  case_ curl "empty reply (52)" retried 52 -- curl -fsS "$H/close"
  case_ curl "server hangs up at once (52 or 56)" retried "*" -- curl -fsS "http://127.0.0.1:$SLAM/"
  case_ curl "read timeout -m 1 (28)" retried 28 -- curl -fsS -m 1 "$H/hang"
  case_ curl "connect timeout (28)" retried 28 -- curl -fsS --connect-timeout 1 "http://127.0.0.1:$FULL/"
  case_ curl "proxy CONNECT 503 (56)" retried 56 -- curl -sS -x "$H" https://s503.invalid/
  XARGS=(-t 1s)
  case_ curl "retry's own -t 1s timeout (124)" retried 124 -- curl -fsS "$H/hang"
  NS=servfail
  case_ curl "DNS: resolver failing (6)" retried 6 -- curl -fsS http://nothere.invalid/
  NS=nx
  case_ curl "DNS: no such name (6: same message)" retried 6 -- curl -fsS http://nothere.invalid/
  case_ curl "HTTP 404" stopped 22 -- curl -fsS "$H/status/404"
  case_ curl "HTTP 401" stopped 22 -- curl -fsS "$H/status/401"
  case_ curl "HTTP 403" stopped 22 -- curl -fsS "$H/status/403"
  case_ curl "HTTP 501" stopped 22 -- curl -fsS "$H/status/501"
  case_ curl "proxy CONNECT 407 (56)" stopped 56 -- curl -sS -x "$H" https://s407.invalid/
  case_ curl "TLS to a plain-HTTP port (35)" stopped 35 -- curl -fsS "https://127.0.0.1:$HP/"
  case_ curl "malformed URL (3)" stopped 3 -- curl -fsS "http://[::1"
  case_ curl "unknown option (2)" stopped 2 -- curl --no-such-option
  case_ curl "HTTP 404 with -fs (silent: no message)" retried 22 -- curl -fs "$H/status/404"
  case_ curl "HTTP 200" succeeded 0 -- curl -fsS "$H/ok"
else skip curl "" "curl not installed"; fi; fi

# ---- wget (-t 1: wget's own retries off, so each attempt is one try)
if wanted wget; then if have wget; then
  case_ wget "HTTP 503 (-S: Retry-After 1)" retried+hint 8 -- wget -S -nv -t 1 -O /dev/null "$H/status/503"
  case_ wget "HTTP 429" retried+throttled 8 -- wget -nv -t 1 -O /dev/null "$H/status/429"
  case_ wget "HTTP 500" retried 8 -- wget -nv -t 1 -O /dev/null "$H/status/500"
  case_ wget "HTTP 503 then 200" recovered 0 -- wget -nv -t 1 -O /dev/null "$H/flaky/wget503/1/503"
  case_ wget "connection refused (4)" retried 4 -- wget -nv -t 1 -O /dev/null "http://127.0.0.1:$CLOSED/"
  case_ wget "read timeout -T 1 (4)" retried 4 -- wget -nv -t 1 -T 1 -O /dev/null "$H/hang"
  case_ wget "no reply (4)" retried 4 -- wget -nv -t 1 -O /dev/null "http://127.0.0.1:$EOFP/"
  NS=servfail
  case_ wget "DNS: resolver failing (4)" retried 4 -- wget -nv -t 1 -O /dev/null http://nothere.invalid/
  case_ wget "HTTP 404" stopped 8 -- wget -nv -t 1 -O /dev/null "$H/status/404"
  case_ wget "HTTP 403" stopped 8 -- wget -nv -t 1 -O /dev/null "$H/status/403"
  case_ wget "HTTP 401 (6)" stopped 6 -- wget -nv -t 1 -O /dev/null "$H/status/401"
  case_ wget "malformed URL (1)" stopped 1 -- wget -nv -t 1 "http://[::1"
  case_ wget "unknown option (2)" stopped 2 -- wget --no-such-option
  case_ wget "TLS to a plain-HTTP port (4)" stopped 4 -- wget -nv -t 1 -O /dev/null "https://127.0.0.1:$HP/"
  case_ wget "HTTP 404 with -q (silent: no message)" retried 8 -- wget -q -t 1 -O /dev/null "$H/status/404"
  case_ wget "HTTP 200" succeeded 0 -- wget -nv -t 1 -O /dev/null "$H/ok"
else skip wget "" "wget not installed"; fi; fi

# ---- sshd on loopback (for ssh, git over ssh, rsync over ssh)
SSHD_OK=0
if have ssh && [ -x /usr/sbin/sshd ] && have ssh-keygen && { wanted ssh || wanted git || wanted rsync; }; then
  mkdir -p "$W/sshd"
  ssh-keygen -q -t ed25519 -N '' -f "$W/sshd/hostkey" && ssh-keygen -q -t ed25519 -N '' -f "$W/sshd/clientkey"
  cp "$W/sshd/clientkey.pub" "$W/sshd/authorized_keys_$(id -un)"
  SP=$(free_port)
  cat >"$W/sshd/config" <<EOF
ListenAddress 127.0.0.1
Port $SP
HostKey $W/sshd/hostkey
PidFile none
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $W/sshd/authorized_keys_%u
StrictModes no
EOF
  if [ ! -d /run/sshd ] && [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd && MADE_RUN_SSHD=1; fi
  start sshd /usr/sbin/sshd -D -e -f "$W/sshd/config"
  wait_port "$SP" && SSHD_OK=1
  : >"$W/sshd/empty_known"
fi
SSH_OK=(ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o IdentitiesOnly=yes -i "$W/sshd/clientkey")
SSH_STRICT=(ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$W/sshd/empty_known" -o IdentitiesOnly=yes -i "$W/sshd/clientkey")
ME=$(id -un)

# ---- ssh
if wanted ssh; then if have ssh; then
  case_ ssh "connection refused" retried 255 -- ssh -o BatchMode=yes -p "$CLOSED" 127.0.0.1 true
  case_ ssh "connect timeout" retried 255 -- ssh -o BatchMode=yes -o ConnectTimeout=1 -p "$FULL" 127.0.0.1 true
  case_ ssh "server closes before key exchange" retried 255 -- ssh -o BatchMode=yes -p "$EOFP" 127.0.0.1 true
  case_ ssh "server resets before key exchange" retried 255 -- ssh -o BatchMode=yes -p "$SLAM" 127.0.0.1 true
  case_ ssh "banner exchange timeout" retried 255 -- ssh -o BatchMode=yes -o ConnectTimeout=1 -p "$MUTE" 127.0.0.1 true
  NS=servfail
  case_ ssh "DNS: resolver failing" retried 255 -- ssh -o BatchMode=yes nothere.invalid true
  NS=nx
  case_ ssh "DNS: no such name" stopped 255 -- ssh -o BatchMode=yes nothere.invalid true
  case_ ssh "bad option" stopped 255 -- ssh -o NoSuchOption=yes 127.0.0.1 true
  if [ "$SSHD_OK" = 1 ]; then
    case_ ssh "Permission denied (publickey)" stopped 255 -- "${SSH_OK[@]}" -p "$SP" nobody@127.0.0.1 true
    case_ ssh "Host key verification failed" stopped 255 -- "${SSH_STRICT[@]}" -p "$SP" "$ME@127.0.0.1" true
    case_ ssh "remote command exits 3" stopped 3 -- "${SSH_OK[@]}" -p "$SP" "$ME@127.0.0.1" 'exit 3'
    case_ ssh "remote command succeeds" succeeded 0 -- "${SSH_OK[@]}" -p "$SP" "$ME@127.0.0.1" true
  else skip ssh "cases needing sshd" "no sshd on loopback"; fi
else skip ssh "" "ssh not installed"; fi; fi

# ---- git
if wanted git; then if have git; then
  export GIT_TERMINAL_PROMPT=0 GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
  mkdir -p "$W/git"
  git init -q --bare "$W/git/ok.git"
  git -c user.name=v -c user.email=v@v init -q "$W/work" && git -C "$W/work" -c user.name=v -c user.email=v@v commit -q --allow-empty -m init && git -C "$W/work" push -q "$W/git/ok.git" HEAD:refs/heads/main
  touch "$W/git/ok.git/git-daemon-export-ok"
  GP=$(free_port)
  start gitd git daemon --listen=127.0.0.1 --port="$GP" --base-path="$W/git" --reuseaddr "$W/git"
  GITD_OK=0; wait_port "$GP" && GITD_OK=1
  case_ git "http 503" retried 128 -- git ls-remote "$H/status/503/x.git"
  case_ git "http 429" retried+throttled 128 -- git ls-remote "$H/status/429/x.git"
  case_ git "http 502" retried 128 -- git ls-remote "$H/status/502/x.git"
  case_ git "http connection refused" retried 128 -- git ls-remote "http://127.0.0.1:$CLOSED/x.git"
  case_ git "http empty reply" retried 128 -- git ls-remote "$H/close/x.git"
  case_ git "http reset" retried 128 -- git ls-remote "http://127.0.0.1:$SLAM/x.git"
  case_ git "http too slow (lowSpeedTime 1)" retried 128 -- git -c http.lowSpeedLimit=1000 -c http.lowSpeedTime=1 ls-remote "http://127.0.0.1:$MUTE/x.git"
  case_ git "git:// connection refused" retried 128 -- git ls-remote "git://127.0.0.1:$CLOSED/x.git"
  case_ git "git:// reset (128, or 141: SIGPIPE, no message)" retried "*" -- git ls-remote "git://127.0.0.1:$SLAM/x.git"
  NS=servfail
  case_ git "git:// DNS: resolver failing" retried 128 -- git ls-remote git://nothere.invalid/x.git
  NS=nx
  case_ git "git:// DNS: no such name" stopped 128 -- git ls-remote git://nothere.invalid/x.git
  NS=nx
  case_ git "https DNS: no such name (same message as failing)" retried 128 -- git ls-remote https://nothere.invalid/x.git
  mkdir -p "$W/locked" && git init -q "$W/locked" && : >"$W/locked/f" && : >"$W/locked/.git/index.lock"
  case_ git "index.lock held" retried 128 -- git -C "$W/locked" add f
  case_ git "http 404: repository not found" stopped 128 -- git ls-remote "$H/status/404/x.git"
  case_ git "http 403" stopped 128 -- git ls-remote "$H/status/403/x.git"
  case_ git "http 401, no credentials" stopped 128 -- git ls-remote "$H/status/401/x.git"
  case_ git "http 401, wrong credentials" stopped 128 -- git ls-remote "http://u:p@127.0.0.1:$HP/status/401/x.git"
  case_ git "local path: not a repository" stopped 128 -- git ls-remote "$W/git/missing.git"
  case_ git "usage error (129)" stopped 129 -- git ls-remote --no-such-option
  case_ git "git:// server hangs up, no reason (gap)" stopped 128 -- git ls-remote "git://127.0.0.1:$EOFP/x.git"
  if [ "$GITD_OK" = 1 ]; then
    case_ git "git daemon: repository not exported" stopped 128 -- git ls-remote "git://127.0.0.1:$GP/missing.git"
    case_ git "git daemon: ok" succeeded 0 -- git ls-remote "git://127.0.0.1:$GP/ok.git"
  else skip git "git daemon cases" "git daemon did not start"; fi
  if [ "$SSHD_OK" = 1 ]; then
    export GIT_SSH_COMMAND="${SSH_OK[*]} -p $SP"
    case_ git "ssh: Permission denied (publickey)" stopped 128 -- git ls-remote "ssh://nobody@127.0.0.1/$W/git/ok.git"
    case_ git "ssh: not a git repository" stopped 128 -- git ls-remote "ssh://$ME@127.0.0.1/$W/git/missing.git"
    case_ git "ssh: ok" succeeded 0 -- git ls-remote "ssh://$ME@127.0.0.1/$W/git/ok.git"
    export GIT_SSH_COMMAND="${SSH_STRICT[*]} -p $SP"
    case_ git "ssh: Host key verification failed" stopped 128 -- git ls-remote "ssh://$ME@127.0.0.1/$W/git/ok.git"
    unset GIT_SSH_COMMAND
  fi
  export GIT_SSH_COMMAND="ssh -o BatchMode=yes -p $CLOSED"
  case_ git "ssh: connection refused" retried 128 -- git ls-remote "ssh://$ME@127.0.0.1/x.git"
  unset GIT_SSH_COMMAND LC_ALL
else skip git "" "git not installed"; fi; fi

# ---- rsync
if wanted rsync; then if have rsync; then
  mkdir -p "$W/rsd/src" && echo hello >"$W/rsd/src/a.txt"
  RP=$(free_port)
  echo "alice:right" >"$W/rsd/secrets" && chmod 600 "$W/rsd/secrets"
  cat >"$W/rsd/rsyncd.conf" <<EOF
address = 127.0.0.1
port = $RP
use chroot = no
pid file = $W/rsd/rsyncd.pid
lock file = $W/rsd/rsyncd.lock
log file = $W/rsd/rsyncd.log
[ok]
    path = $W/rsd/src
    read only = yes
[busy]
    path = $W/rsd/src
    max connections = 1
[closed]
    path = $W/rsd/src
    max connections = -1
[secret]
    path = $W/rsd/src
    auth users = alice
    secrets file = $W/rsd/secrets
EOF
  [ "$(id -u)" = 0 ] && printf 'uid = root\ngid = root\n' | cat - "$W/rsd/rsyncd.conf" >"$W/rsd/c" && mv "$W/rsd/c" "$W/rsd/rsyncd.conf"
  start rsyncd rsync --daemon --no-detach --config="$W/rsd/rsyncd.conf"
  RSD_OK=0; wait_port "$RP" && RSD_OK=1
  D=rsync://127.0.0.1:$RP
  case_ rsync "daemon port refused (10)" retried 10 -- rsync "rsync://127.0.0.1:$CLOSED/ok/"
  case_ rsync "daemon connect timeout --contimeout=1 (35)" retried 35 -- rsync --contimeout=1 "rsync://127.0.0.1:$FULL/ok/"
  case_ rsync "daemon silent, --timeout=1 (30)" retried 30 -- rsync --timeout=1 "rsync://127.0.0.1:$MUTE/ok/"
  case_ rsync "no server greeting (5)" retried 5 -- rsync "rsync://127.0.0.1:$EOFP/ok/"
  case_ rsync "remote shell exits at once (12)" retried 12 -- rsync -e true "$W/rsd/src/a.txt" x:/tmp/
  case_ rsync "ssh connection refused (255, or 12: a race)" retried "*" -- rsync -e "ssh -o BatchMode=yes -p $CLOSED" "$W/rsd/src/a.txt" "127.0.0.1:$W/rsd/copy"
  NS=servfail
  case_ rsync "DNS: resolver failing (10)" retried 10 -- rsync rsync://nothere.invalid/ok/
  NS=nx
  case_ rsync "DNS: no such name (10)" stopped 10 -- rsync rsync://nothere.invalid/ok/
  case_ rsync "missing source file (23)" stopped 23 -- rsync "$W/rsd/nothere" "$W/rsd/copy"
  case_ rsync "unknown option (1)" stopped 1 -- rsync --no-such-option
  if [ "$RSD_OK" = 1 ]; then
    # hold the only slot of [busy] while the case runs
    python3 - "$RP" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"@RSYNCD: 31.0\n"); s.recv(200); s.sendall(b"busy\n"); time.sleep(6)
EOF
    HOLD=$!; PIDS+=("$HOLD"); sleep 0.5
    case_ rsync "daemon: max connections reached (5)" retried+throttled 5 -- rsync "$D/busy/"
    kill "$HOLD" 2>/dev/null
    case_ rsync "daemon: unknown module (5)" stopped 5 -- rsync "$D/nomodule/"
    case_ rsync "daemon: module disabled (max connections -1) (5)" stopped 5 -- rsync "$D/closed/"
    case_ rsync "daemon: auth failed (5)" stopped 5 -- env RSYNC_PASSWORD=wrong rsync "rsync://alice@127.0.0.1:$RP/secret/"
    case_ rsync "daemon: missing file (23)" stopped 23 -- rsync "$D/ok/nothere" "$W/rsd/copy"
    case_ rsync "daemon: ok" succeeded 0 -- rsync "$D/ok/"
  else skip rsync "daemon cases" "rsync --daemon did not start"; fi
  if [ "$SSHD_OK" = 1 ]; then
    case_ rsync "ssh: Permission denied (255, or 12: a race)" stopped "*" -- rsync -e "${SSH_OK[*]} -p $SP" "$W/rsd/src/a.txt" "nobody@127.0.0.1:$W/rsd/copy"
    case_ rsync "ssh: Host key verification failed (255, or 12)" stopped "*" -- rsync -e "${SSH_STRICT[*]} -p $SP" "$W/rsd/src/a.txt" "$ME@127.0.0.1:$W/rsd/copy"
    case_ rsync "ssh: ok" succeeded 0 -- rsync -e "${SSH_OK[*]} -p $SP" "$W/rsd/src/a.txt" "$ME@127.0.0.1:$W/rsd/copy"
  fi
else skip rsync "" "rsync not installed"; fi; fi

# ---- apt (private state, lists, cache and sources: the system's are not touched)
if wanted apt; then if have apt-get && [ "$(id -u)" = 0 ]; then
  A=$W/apt; mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/dpkg" "$W/root/repo"
  cp /var/lib/dpkg/status "$A/dpkg/status" 2>/dev/null || : >"$A/dpkg/status"
  for c in 503 404; do printf 'Package: fakepkg%s\nVersion: 1.0\nArchitecture: all\nMaintainer: v <v@v.invalid>\nFilename: ./status%s/fakepkg%s_1.0_all.deb\nSize: 100\nSHA256: %064d\nDescription: a package whose download answers %s\n\n' $c $c $c 0 $c; done >"$W/root/repo/Packages"
  APT=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts="$A/none" -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache" -o Dir::State::status="$A/dpkg/status" -o Acquire::Retries=0 -o Acquire::http::Timeout=2)
  export LC_ALL=C
  src() { echo "deb [trusted=yes] $1" >"$A/sources.list"; }
  src "$H/status/503/debian bookworm main"
  case_ apt "update: InRelease 503 (W:, exit 0)" retried 1 -- apt-get update "${APT[@]}"
  src "$H/status/429/debian bookworm main"
  case_ apt "update: InRelease 429 (W:, exit 0)" retried+throttled 1 -- apt-get update "${APT[@]}"
  src "http://127.0.0.1:$CLOSED/debian bookworm main"
  case_ apt "update: connection refused (W:, exit 0)" retried 1 -- apt-get update "${APT[@]}"
  src "http://127.0.0.1:$FULL/debian bookworm main"
  case_ apt "update: connect timeout (W:, exit 0)" retried 1 -- apt-get update "${APT[@]}"
  src "http://nothere.invalid/debian bookworm main"
  NS=servfail
  case_ apt "update: DNS resolver failing (W:, exit 0)" retried 1 -- apt-get update "${APT[@]}"
  NS=nx
  case_ apt "update: DNS no such name (W:, exit 0 kept)" stopped 0 -- apt-get update "${APT[@]}"
  src "$H/status/404/debian bookworm main"
  case_ apt "update: Packages 404 (100)" stopped 100 -- apt-get update "${APT[@]}"
  src "$H/files/repo ./"
  apt-get update "${APT[@]}" >/dev/null 2>&1
  case_ apt "install: .deb 503 (100)" retried 100 -- apt-get install -y --download-only "${APT[@]}" fakepkg503
  case_ apt "install: .deb 404 (100)" stopped 100 -- apt-get install -y --download-only "${APT[@]}" fakepkg404
  case_ apt "install: no such package (100)" stopped 100 -- apt-get install -y --download-only "${APT[@]}" nonexistent-pkg-xyz
  case_ apt "invalid operation (100)" stopped 100 -- apt-get frobnicate "${APT[@]}"
  python3 -c 'import fcntl,sys,time;f=open(sys.argv[1],"a");fcntl.lockf(f,fcntl.LOCK_EX);time.sleep(8)' "$A/lists/lock" &
  HOLD=$!; PIDS+=("$HOLD"); sleep 0.5
  case_ apt "update: lists lock held by another process (100)" retried 100 -- apt-get update "${APT[@]}"
  kill "$HOLD" 2>/dev/null
  python3 -c 'import fcntl,sys,time;f=open(sys.argv[1],"a");fcntl.lockf(f,fcntl.LOCK_EX);time.sleep(8)' "$A/dpkg/lock-frontend" &
  HOLD=$!; PIDS+=("$HOLD"); sleep 0.5
  case_ apt "install: dpkg frontend lock held (100)" retried 100 -- apt-get install -y --download-only "${APT[@]}" fakepkg503
  kill "$HOLD" 2>/dev/null
  unset LC_ALL
else skip apt "" "apt-get missing or not root"; fi; fi

# ---- npm (a loopback "registry"; npm's own fetch retries off)
if wanted npm; then if have npm; then
  mkdir -p "$W/npm" && echo '{"name":"t","version":"1.0.0"}' >"$W/npm/package.json"
  NPM=(npm --prefix "$W/npm" --cache "$W/npm/cache" --fetch-retries=0 --fetch-timeout=2000 --no-audit --no-fund --no-update-notifier)
  case_ npm "registry 503" retried 1 -- "${NPM[@]}" install left-pad --registry "$H/status/503/"
  case_ npm "registry 429" retried+throttled 1 -- "${NPM[@]}" install left-pad --registry "$H/status/429/"
  case_ npm "registry connection refused" retried 1 -- "${NPM[@]}" install left-pad --registry "http://127.0.0.1:$CLOSED/"
  case_ npm "registry reset (socket hang up)" retried 1 -- "${NPM[@]}" install left-pad --registry "$H/close/"
  case_ npm "registry timeout" retried 1 -- "${NPM[@]}" install left-pad --registry "$H/hang/"
  NS=servfail
  case_ npm "DNS: resolver failing (EAI_AGAIN)" retried 1 -- "${NPM[@]}" install left-pad --registry http://nothere.invalid/
  NS=nx
  case_ npm "DNS: no such name (ENOTFOUND)" stopped 1 -- "${NPM[@]}" install left-pad --registry http://nothere.invalid/
  case_ npm "registry 404" stopped 1 -- "${NPM[@]}" install left-pad --registry "$H/status/404/"
  case_ npm "registry 401" stopped 1 -- "${NPM[@]}" install left-pad --registry "$H/status/401/"
  case_ npm "npm ci without a lockfile (EUSAGE)" stopped 1 -- "${NPM[@]}" ci
else skip npm "" "npm not installed"; fi; fi

# ---- pip (a loopback index; pip's own retries off)
if wanted pip; then if have pip; then
  S=$W/root/simple
  for c in 503 429 404; do mkdir -p "$S/fakepkg$c"; echo "<a href=\"../../status$c/fakepkg$c-1.0-py3-none-any.whl\">fakepkg$c-1.0-py3-none-any.whl</a>" >"$S/fakepkg$c/index.html"; done
  mkdir -p "$S/fakepkgrefused" "$S/fakepkghang"
  echo "<a href=\"http://127.0.0.1:$CLOSED/fakepkgrefused-1.0-py3-none-any.whl\">fakepkgrefused-1.0-py3-none-any.whl</a>" >"$S/fakepkgrefused/index.html"
  echo "<a href=\"../../../hang/fakepkghang-1.0-py3-none-any.whl\">fakepkghang-1.0-py3-none-any.whl</a>" >"$S/fakepkghang/index.html"
  PIP=(env -u PIP_FIND_LINKS PIP_DISABLE_PIP_VERSION_CHECK=1 pip install --no-cache-dir --retries 0 --timeout 2 --target "$W/pip" --index-url "$H/files/simple")
  case_ pip "wheel 503" retried 1 -- "${PIP[@]}" fakepkg503
  case_ pip "wheel 429" retried+throttled 1 -- "${PIP[@]}" fakepkg429
  case_ pip "wheel connection refused" retried 1 -- "${PIP[@]}" fakepkgrefused
  case_ pip "wheel read timeout" retried 1 -- "${PIP[@]}" fakepkghang
  case_ pip "wheel 404" stopped 1 -- "${PIP[@]}" fakepkg404
  case_ pip "no such package" stopped 1 -- "${PIP[@]}" nonexistent-pkg-xyz
  case_ pip "unknown option (2)" stopped 2 -- pip install --no-such-option
  case_ pip "index 503 (hidden by pip: \"no matching distribution\")" stopped 1 -- env -u PIP_FIND_LINKS pip install --no-cache-dir --retries 0 --target "$W/pip" --index-url "$H/status/503/simple" xyz
else skip pip "" "pip not installed"; fi; fi

# ---- docker pull (only with a running daemon: DOCKER_HOST or /var/run/docker.sock)
if wanted docker; then if have docker && timeout 10 docker info >/dev/null 2>&1; then
  case_ docker "registry 503" retried 1 -- docker pull "127.0.0.1:$HP/status503/img:latest"
  case_ docker "registry 429 (toomanyrequests)" retried+throttled 1 -- docker pull "127.0.0.1:$HP/status429/img:latest"
  case_ docker "registry 502" retried 1 -- docker pull "127.0.0.1:$HP/status502/img:latest"
  case_ docker "registry connection refused" retried 1 -- docker pull "127.0.0.1:$CLOSED/img:latest"
  case_ docker "registry hangs up (EOF)" retried 1 -- docker pull "127.0.0.1:$EOFP/img:latest"
  case_ docker "no daemon at DOCKER_HOST" retried 1 -- env DOCKER_HOST="unix://$W/nodaemon.sock" docker pull img
  case_ docker "registry 404: manifest unknown" stopped 1 -- docker pull "127.0.0.1:$HP/status404/img:latest"
  case_ docker "registry 401: unauthorized" stopped 1 -- docker pull "127.0.0.1:$HP/status401/img:latest"
  case_ docker "registry 403: pull access denied" stopped 1 -- docker pull "127.0.0.1:$HP/status403/img:latest"
  case_ docker "invalid reference" stopped 1 -- docker pull UPPER/img
else skip docker "" "no docker daemon reachable"; fi; fi

# ---------------------------------------------------------------- table
pass=0 fail=0 skipped=0
printf '%-7s | %-58s | %-12s | %-8s | %-16s | %s\n' preset case expected attempts "exit code" result
printf -- '--------|-%s-|--------------|----------|------------------|-------\n' "$(printf '%.0s-' $(seq 58))"
for row in "${ROWS[@]}"; do
  IFS='|' read -r p c e a x r n <<<"$row"
  printf '%-7s | %-58s | %-12s | %-8s | %-16s | %s\n' "$p" "$c" "$e" "$a" "$x" "$r"
  case $r in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
done
echo "$pass passed, $fail failed, $skipped skipped"
if [ "$VERBOSE" = 1 ]; then
  for row in "${ROWS[@]}"; do
    IFS='|' read -r p c e a x r n <<<"$row"
    [ -n "${n:-}" ] || continue
    printf '\n## %s: %s (%s, exit %s)\n$ %s\n' "$p" "$c" "$r" "$x" "$(cat "$W/case$n.cmd")"
    sed 's/^/    /' "$W/case$n.err" | head -40
  done
fi
[ "$fail" -eq 0 ]
