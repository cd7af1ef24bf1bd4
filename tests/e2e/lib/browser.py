#!/usr/bin/python3
"""Drive Debian's headless Chromium over the DevTools protocol, through
--remote-debugging-pipe (file descriptors 3 and 4, messages ending in NUL),
with nothing beyond Python's standard library.

    with Browser() as b:
        b.open("file:///tmp/x.html")
        b.eval("document.title")
        b.mouse("mouseMoved", 100, 200)
        b.screenshot("/tmp/x.png")
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# the flags the machine notes give for a closed network
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio"]


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width=1400, height=900, log=os.devnull):
        self.width, self.height, self.log = width, height, log
        self.next_id = 0
        self.buf = b""
        self.events = []

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="perfport-chromium.")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():
            # chromium reads commands on fd 3 and writes on fd 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM] + FLAGS + ["--user-data-dir=" + self.profile, "--remote-debugging-pipe",
                                  "--window-size=%d,%d" % (self.width, self.height), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
            close_fds=False, preexec_fn=fds)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=self.width,
                  height=self.height, deviceScaleFactor=1, mobile=False)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise BrowserError("no answer from chromium in %d s" % timeout)
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the pipe (see %s)" % self.log)
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=False, timeout=60, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        while True:
            for k, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(k)
            if time.time() > deadline:
                raise BrowserError("no %s in %d s" % (method, timeout))
            m = self._read(max(deadline - time.time(), 0.1))
            if "method" in m:
                self.events.append(m)

    def open(self, url, timeout=60):
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_event("Page.loadEventFired", timeout)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise BrowserError("%s: %s" % (expr[:60], r["exceptionDetails"]))
        return r["result"].get("value")

    def mouse(self, kind, x, y, **kw):
        self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, **kw)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
