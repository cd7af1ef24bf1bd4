// waits-rs.rs - Rust std's waits, one thread each, named for what it does:
// a contended Mutex, a RwLock reader while a writer holds it, a Condvar
// wait (notified), a Condvar wait_timeout, and thread::sleep. A holder
// thread keeps the locks 5 ms at a time, a notifier notifies every 10 ms.
// usage: waits-rs SECONDS
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

fn spawn<F: FnOnce() + Send + 'static>(name: &str, f: F) -> thread::JoinHandle<()> {
    thread::Builder::new().name(name.to_string()).spawn(f).unwrap()
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.5);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let m = Arc::new(Mutex::new(0u64));
    let rw = Arc::new(RwLock::new(0u64));
    let cv = Arc::new((Mutex::new(0u64), Condvar::new()));
    let tick = Duration::from_millis(10);
    let mut all = Vec::new();
    {
        let (m, rw) = (m.clone(), rw.clone());
        all.push(spawn("holder", move || {
            while Instant::now() < end {
                {
                    let _a = m.lock().unwrap();
                    let _b = rw.write().unwrap();
                    thread::sleep(Duration::from_millis(5));
                }
                thread::sleep(Duration::from_millis(5));
            }
        }));
    }
    {
        let m = m.clone();
        all.push(spawn("rs_mutex", move || {
            while Instant::now() < end {
                *m.lock().unwrap() += 1;
                thread::sleep(Duration::from_millis(1));
            }
        }));
    }
    {
        let rw = rw.clone();
        all.push(spawn("rs_rwlock", move || {
            while Instant::now() < end {
                let _r = rw.read().unwrap();
                drop(_r);
                thread::sleep(Duration::from_millis(1));
            }
        }));
    }
    {
        let cv = cv.clone();
        all.push(spawn("rs_condvar", move || {
            let (l, c) = &*cv;
            let mut g = l.lock().unwrap();
            while Instant::now() < end {
                g = c.wait(g).unwrap();
            }
        }));
    }
    {
        let cv = Arc::new((Mutex::new(()), Condvar::new()));
        all.push(spawn("rs_cv_timeout", move || {
            let (l, c) = &*cv;
            let mut g = l.lock().unwrap();
            while Instant::now() < end {
                g = c.wait_timeout(g, tick).unwrap().0;
            }
        }));
    }
    all.push(spawn("rs_sleep", move || {
        while Instant::now() < end {
            thread::sleep(tick);
        }
    }));
    {
        let cv = cv.clone();
        all.push(spawn("notifier", move || {
            while Instant::now() < end + Duration::from_millis(50) {
                thread::sleep(tick);
                let (l, c) = &*cv;
                *l.lock().unwrap() += 1;
                c.notify_all();
            }
        }));
    }
    for t in all {
        t.join().unwrap();
    }
}
