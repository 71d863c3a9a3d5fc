#!/bin/sh
# Crash fixture: the first run leaves a flag, starts a child and waits (its
# worker is then SIGKILLed); the run after the requeue finds the flag and
# succeeds.
flag=$(sed -e 's/.*"flag":"\([^"]*\)".*/\1/' "$WF_INPUT")
if [ -e "$flag" ]; then
	echo '{"second_run":true}' >"$WF_RESULT"
	exit 0
fi
touch "$flag"
sleep 300 &
echo started
wait
