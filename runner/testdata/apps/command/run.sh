#!/bin/sh
# Conformance fixture for the command runtime: $WF_INPUT in, $WF_RESULT out.
case "$WF_ACTION" in
echo)
	echo out-1
	echo err-2 >&2
	echo out-3
	printf '{"echo":%s,"action":"%s","job":%s,"token":"%s"}' "$(cat "$WF_INPUT")" "$WF_ACTION" \
		"$([ -n "$WF_JOB_ID" ] && echo true || echo false)" "$([ -n "$WF_TOKEN" ] && echo string)" >"$WF_RESULT"
	;;
throw)
	echo "boom from command" >&2
	exit 3
	;;
exit) exit 3 ;;
big)
	n=$(sed 's/[^0-9]//g' "$WF_INPUT")
	{ printf '"'; head -c "$n" /dev/zero | tr '\0' x; printf '"'; } >"$WF_RESULT"
	;;
wrong) echo '{"greeting":5}' >"$WF_RESULT" ;;
spam)
	kb=$(sed 's/[^0-9]//g' "$WF_INPUT")
	head -c $((kb * 1024)) /dev/zero | tr '\0' y
	echo '{"ok":true}' >"$WF_RESULT"
	;;
env) env | cut -d= -f1 | sort | awk 'BEGIN{printf "["} {printf "%s\"%s\"", (NR>1?",":""), $0} END{printf "]"}' >"$WF_RESULT" ;;
write)
	if (echo overwritten >run.sh) 2>/dev/null; then echo '{"wrote":true}'; else echo '{"wrote":false}'; fi >"$WF_RESULT"
	;;
token)
	echo "token is $WF_TOKEN ok"
	echo '{"ok":true}' >"$WF_RESULT"
	;;
cgroup) printf '{"cgroup":"%s"}' "$(sed -n 's/^0:://p' /proc/self/cgroup)" >"$WF_RESULT" ;;
*) echo "unknown action $WF_ACTION" >&2; exit 1 ;;
esac
