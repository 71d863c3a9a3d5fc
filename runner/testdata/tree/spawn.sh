#!/bin/sh
# Process-tree fixture: a plain child, a setsid child and a double-forked
# daemon, then it waits. With WF_ACTION=trap the whole tree ignores SIGTERM
# (an ignored signal is inherited), so only SIGKILL ends it.
# With WF_ACTION=leave it exits at once, leaving a child that holds stdout.
if [ "$WF_ACTION" = leave ]; then
	setsid sleep 300 &
	echo '{"left":true}' >"$WF_RESULT"
	exit 0
fi
if [ "$WF_ACTION" = trap ]; then
	trap '' TERM
fi
sleep 300 &
setsid sleep 301 &
(sh -c 'sleep 302 >/dev/null 2>&1 &' &)
echo started
while :; do
	sleep 1
done
