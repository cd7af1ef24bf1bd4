// rs.rs - a Rust workload for the conformance tests: Rust's mangled and
// demangled names (paths with ::, generics, closures, trait impls), on CPU
// and off CPU (a contended Mutex, a Condvar wait with a timeout, sleep).
// usage: rs SECONDS
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

struct Table<K, V> {
    rows: BTreeMap<K, V>,
}

impl<K: Copy + Into<u64> + Ord, V: Copy + Into<u64>> Table<K, V> {
    #[inline(never)]
    fn sum_rows(&self, rounds: u32) -> u64 {
        let mut s = 0u64;
        for _ in 0..rounds {
            for (k, v) in &self.rows {
                s = s.wrapping_add((*k).into().wrapping_mul(31)).wrapping_add((*v).into());
            }
        }
        s
    }
}

trait Step {
    fn step(&self, n: u64) -> u64;
}

struct Hasher;

impl Step for Hasher {
    #[inline(never)]
    fn step(&self, mut x: u64) -> u64 {
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        x
    }
}

fn cpu_worker(end: Instant) -> u64 {
    let mut t = Table { rows: BTreeMap::new() };
    for i in 0u32..256 {
        t.rows.insert(i, i * 7);
    }
    let f: Box<dyn Fn(u32) -> u64> = Box::new(|n| t.sum_rows(n) ^ Hasher.step(n as u64));
    let mut sink = 0u64;
    while Instant::now() < end {
        sink = sink.wrapping_add(f(20));
    }
    sink
}

fn lock_worker(end: Instant, lock: Arc<Mutex<u64>>) {
    while Instant::now() < end {
        let mut g = lock.lock().unwrap();
        *g = Hasher.step(*g);
        thread::sleep(Duration::from_millis(2));
    }
}

fn wait_worker(end: Instant) {
    let pair = (Mutex::new(false), Condvar::new());
    let mut g = pair.0.lock().unwrap();
    while Instant::now() < end {
        g = pair.1.wait_timeout(g, Duration::from_millis(5)).unwrap().0;
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let lock = Arc::new(Mutex::new(1u64));
    let mut threads = vec![thread::spawn(move || {
        if cpu_worker(end) == 42 {
            println!("42");
        }
    })];
    for _ in 0..2 {
        let l = Arc::clone(&lock);
        threads.push(thread::spawn(move || lock_worker(end, l)));
    }
    threads.push(thread::spawn(move || wait_worker(end)));
    for t in threads {
        t.join().unwrap();
    }
}
