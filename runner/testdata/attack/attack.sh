#!/bin/sh
# Attack fixture: each action (WF_ACTION) tries one escape a job must not
# manage (DESIGN §6, the attack suite in attack_test.go). It writes
# {"escaped": true|false, "detail": "..."} to $WF_RESULT; "escaped" true
# means the attack worked. Inputs come as {"path": "...", "pid": "..."}.
arg() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$WF_INPUT"; }
say() { printf '{"escaped": %s, "detail": "%s"}' "$1" "$(printf '%s' "$2" | tr -d '"\\\n' | cut -c1-300)" >"$WF_RESULT"; }
try() { # try CMD...: escaped when the command succeeds
	if out=$("$@" 2>&1); then say true "$out"; else say false "$out"; fi
}
case "$WF_ACTION" in
read) try cat "$(arg path)" ;;
write) try sh -c "echo pwned > '$(arg path)'" ;;
list) try sh -c "ls -A '$(arg path)' | grep -q ." ;;
ls) say false "$(ls -A "$(arg path)" 2>&1 | tr '\n' ' ')" ;;
signal) try kill -9 "$(arg pid)" ;;
remount) try mount -o remount,bind,rw "$PWD" ;;
nested) try unshare -Urm sh -c "mount -o remount,bind,rw '$PWD' && touch '$PWD/pwned'" ;;
cgroup) # leave the job's cgroup for the root one, in any hierarchy
	for d in /sys/fs/cgroup /sys/fs/cgroup/pids /sys/fs/cgroup/unified; do
		if echo $$ >"$d/cgroup.procs" 2>/dev/null; then say true "moved to $d"; exit 0; fi
	done
	say false "$(ls /sys 2>&1)" ;;
environ) # any process's environment carrying the worker's secrets
	found=""
	for e in /proc/[0-9]*/environ; do
		if tr '\0' '\n' <"$e" 2>/dev/null | grep -q '^WINDFORCE_\(SECRET\|DATABASE_URL\)='; then found="$found $e"; fi
	done
	if [ -n "$found" ]; then say true "$found"; else say false "$(ls -d /proc/[0-9]* | wc -l) processes visible"; fi ;;
identity)
	nested=false; if unshare -U true 2>/dev/null; then nested=true; fi
	printf '{"uid": %s, "gid": %s, "groups": "%s", "nested_userns": %s, "status": "%s"}' "$(id -u)" "$(id -g)" "$(id -G)" "$nested" \
		"$(grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd)' /proc/self/status | tr '\t\n' ' ')" >"$WF_RESULT" ;;
sleep) echo started; sleep "$(arg seconds)"; echo '{"slept": true}' >"$WF_RESULT" ;;
tmp)
	if [ -e /tmp/mark ]; then say true "found another job's /tmp/mark"; else echo x >/tmp/mark && say false "private /tmp"; fi ;;
daemon) # outlive the job: a setsid, double-forked child with a cleared environment
	(setsid env -i /bin/sh -c "sleep $(arg seconds)" >/dev/null 2>&1 &) &
	sleep 0.2
	say false "left a daemon" ;;
forkbomb) # more processes than the pids limit allows
	n=0; while [ $n -lt "$(arg count)" ]; do sleep 30 2>/dev/null & n=$((n + 1)); done 2>/dev/null
	# Count with builtins only: at the limit, nothing more can be forked.
	c=0; for p in /proc/[0-9]*; do c=$((c + 1)); done
	echo "{\"escaped\": false, \"detail\": \"$c\"}" >"$WF_RESULT" ;;
memory) head -c "$(arg bytes)" /dev/zero | tail >/dev/null; say false "survived" ;;
fifo) rm -f "$WF_ERROR"; mkfifo "$WF_ERROR"; exit 1 ;;
fifo-result) mkfifo "$WF_RESULT" ;;
zero) ln -s /dev/zero "$WF_RESULT" ;;
link) ln -s "$(arg path)" "$WF_RESULT" ;;
*) echo "unknown action $WF_ACTION" >&2; exit 2 ;;
esac
