// The threads a Node.js process waits in (tests/e2e/58-nodejs.sh), for
// SECONDS (argv[2]): libuv's thread pool reads FILE (argv[3]) a few times
// at the start, then has nothing to do; a worker_threads Worker waits in
// Atomics.wait, woken by the main thread's timer every 10 ms (another
// task's event: sleep); V8's platform workers wait for background tasks.
'use strict';
const { Worker, isMainThread, workerData } = require('worker_threads');
const fs = require('fs');

if (isMainThread) {
	const secs = parseFloat(process.argv[2] || '2');
	const a = new Int32Array(new SharedArrayBuffer(4));
	const w = new Worker(__filename, { workerData: a.buffer });
	for (let i = 0; i < 8; i++)
		fs.readFile(process.argv[3] || __filename, () => {});
	const end = Date.now() + secs * 1000;
	const t = setInterval(() => {
		const done = Date.now() > end;
		Atomics.store(a, 0, done ? 2 : 1);
		Atomics.notify(a, 0);
		if (done)
			clearInterval(t);
	}, 10);
	w.on('error', (e) => { console.error(e); process.exitCode = 1; });
} else {
	const a = new Int32Array(workerData);
	for (;;) {
		Atomics.wait(a, 0, 0);
		if (Atomics.exchange(a, 0, 0) === 2)
			break;
	}
}
