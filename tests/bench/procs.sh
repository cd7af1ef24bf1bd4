#!/usr/bin/env bash
# procs.sh WORKLOAD SECONDS: a machine's worth of processes for make bench's
# system-wide recording (issue 57): the workload twice for the whole time
# (threads on CPU, in locks, I/O and sleeps; one 60 calls deep), and beside
# them a shell loop starting short-lived programs one after another (a
# checksum, a compression, awk, python, sort) - hundreds of processes, each
# mapping its own libraries and exiting.
set -u
w=$1 secs=$2
"$w" "$secs" all >/dev/null &
"$w" "$secs" deep >/dev/null &
end=$((SECONDS + secs))
while [ "$SECONDS" -lt "$end" ]; do
	sha256sum "$w" >/dev/null
	gzip -1 -c /bin/bash >/dev/null
	awk 'BEGIN { for (i = 0; i < 200000; i++) s += i }'
	/usr/bin/python3 -c 'sum(range(200000))'
	sort -R /etc/services >/dev/null
done
wait
