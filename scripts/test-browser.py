#!/usr/bin/env python3
"""Drives `spatix view` in Debian's headless chromium through chromedriver (the W3C WebDriver
HTTP protocol, spoken here with the standard library: no selenium, no browser download).

    python3 scripts/test-browser.py SPATIX [--screenshot FILE]
    python3 scripts/test-browser.py SPATIX --bench [--write]

The test (default): serves `spatix view --preset seed-002`, loads the page, waits for frames,
pauses, clicks a point and checks the k nearest the page highlights against a brute force
computed here from the exact boxes the page holds once paused, drags a window and checks its
hits the same way, shift-drags a ray, checks that the structure menu offers every dynamic
structure of `spatix view --help`, switches to each and checks a click and a window in each,
saves a screenshot, and checks that the server ends on Ctrl-C (SIGINT). Then data mode: a
file of points saved by `spatix build --index packed` is shown in the packed index itself (its
regions drawn), the menu must offer every structure of `spatix build --help` (the static ones
too), and a click and a window are checked in each; a file of boxes must be offered every
structure of `spatix query --help` (no kd-tree), and the kd-tree refused. Any failure,
including a browser that does not start, exits non-zero.

--bench: runs `spatix view --measure` (the server's frame and encoding times at 100,000 agents
with the sweep grid, one thread), then serves the same to the page, lets it draw for 15 s, and
prints the frames received and drawn a second, the bytes and decoding time of a frame and the
page's draw time per frame (median and p95 over the frames drawn); --write puts them into
docs/BENCHMARKS.md's `view-draw` block.
"""

import base64
import json
import math
import os
import pathlib
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1200,800"]


def fail(message):
    sys.exit(f"test-browser: FAILED: {message}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """A chromedriver session: `call(method, path, body)` on the W3C protocol."""

    def __init__(self, profile):
        if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
            fail(f"{CHROMIUM} or {CHROMEDRIVER} missing (scripts/test-browser.sh installs them)")
        self.port = free_port()
        self.process = subprocess.Popen([CHROMEDRIVER, f"--port={self.port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 20
        while True:
            try:
                if self.request("GET", "/status")["value"].get("ready"):
                    break
            except (OSError, urllib.error.URLError):
                pass
            if time.time() > deadline:
                self.process.kill()
                fail("chromedriver did not start within 20 s")
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM,
                                   "args": FLAGS + [f"--user-data-dir={profile}"]}}}}
        try:
            self.session = self.request("POST", "/session", caps)["value"]["sessionId"]
        except Exception as e:  # noqa: BLE001 (any failure to start the browser fails the test)
            self.process.kill()
            fail(f"chromium did not start: {e}")

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None

    def call(self, method, path, body=None):
        return self.request(method, f"/session/{self.session}{path}", body)["value"]

    def js(self, script, *args):
        return self.call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait(self, script, what, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.js(script)
            if value:
                return value
            time.sleep(0.1)
        fail(f"timed out waiting for {what} (page: {self.js('return window.spatix && [window.spatix.received, window.spatix.frames, window.spatix.renderer];')})")

    def pointer(self, steps, shift=False):
        """Pointer actions on viewport coordinates: ("move", x, y), ("down",), ("up",)."""
        actions = []
        for step in steps:
            if step[0] == "move":
                actions.append({"type": "pointerMove", "duration": 50, "origin": "viewport",
                                "x": int(round(step[1])), "y": int(round(step[2]))})
            else:
                actions.append({"type": "pointer" + step[0].capitalize(), "button": 0})
        sources = [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                    "actions": actions}]
        if shift:
            keys = [{"type": "keyDown", "value": "\ue008"}]
            keys += [{"type": "pause"} for _ in actions[1:]]
            keys.append({"type": "keyUp", "value": "\ue008"})
            sources[0]["actions"] = [{"type": "pause"}] + actions + [{"type": "pause"}]
            sources.append({"type": "key", "id": "keyboard", "actions": keys})
        self.call("POST", "/actions", {"actions": sources})
        self.call("DELETE", "/actions")

    def close(self):
        try:
            self.call("DELETE", "")
        except Exception:  # noqa: BLE001 (closing what may be gone)
            pass
        self.process.terminate()
        self.process.wait(10)


def serve(spatix, *args):
    """Starts `spatix view ARGS` and returns the process and its URL."""
    process = subprocess.Popen([spatix, "view", *args], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if "http://" not in line:
        process.kill()
        fail(f"spatix view printed no URL: {line!r}")
    return process, "http://" + line.split("http://", 1)[1].split()[0]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def listed(spatix, command):
    """The values `spatix COMMAND --help` lists for `--index`."""
    text = subprocess.run([spatix, command, "--help"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout
    block = text.split("--index <INDEX>", 1)[1].split("\n  -", 1)[0].split("\n      --", 1)[0]
    names = [line.strip()[2:].split(":", 1)[0] for line in block.splitlines()
             if line.strip().startswith("- ")]
    if not names:
        fail(f"`spatix {command} --help` lists no --index values")
    return names


def check_menu(driver, expected, what):
    """The page's structure menu offers exactly `expected` (and the hello message the same)."""
    menu = driver.js("return Array.from(document.getElementById('index').options, o => o.value);")
    hello = driver.js("return window.spatixLast.hello.indexes;")
    if sorted(menu) != sorted(expected) or menu != hello:
        fail(f"{what}: the menu offers {menu} (hello {hello}), the list is {sorted(expected)}")
    print(f"  menu ({what}): {len(menu)} structures, as listed")
    return menu


def switch(driver, kind):
    driver.js("const s = document.getElementById('index'); s.value = arguments[0];"
              "s.dispatchEvent(new Event('change'));", kind)
    driver.wait(f"return window.spatix.header.index === '{kind}';", f"the switch to {kind}")


def boxes_of(driver):
    if not driver.js("return window.spatix.header.exact;"):
        fail("the page holds quantised boxes: exact ones are sent when the elements stand still")
    flat = driver.js("return Array.from(window.spatix.boxes);")
    return [(flat[i] - flat[i + 2], flat[i + 1] - flat[i + 3], flat[i] + flat[i + 2],
             flat[i + 1] + flat[i + 3]) for i in range(0, len(flat), 4)]


def distance(box, x, y):
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return math.hypot(dx, dy)


def check_knn(driver, boxes, world_point, label):
    driver.js("window.spatixLast.knn = null;")
    x, y = driver.js("return window.spatixWorldToClient(arguments[0], arguments[1]);", *world_point)
    driver.pointer([("move", x, y), ("down",), ("up",)])
    knn = driver.wait("return window.spatixLast.knn;", f"the k nearest ({label})")
    px, py = knn["point"]
    k = knn["k"]
    if k != 6 or len(knn["ids"]) != k:
        fail(f"{label}: expected 6 neighbours, got k={k}, ids {knn['ids']}")
    expected = sorted(distance(b, px, py) for b in boxes)[:k]
    for rank, (i, d) in enumerate(zip(knn["ids"], knn["dists"])):
        own = distance(boxes[i], px, py)
        if abs(own - d) > 1e-3 * max(1.0, d) or abs(expected[rank] - d) > 1e-3 * max(1.0, d):
            fail(f"{label}: neighbour {rank} is {i} at {d}; brute force here: {expected[rank]} "
                 f"(that element is at {own})")
    if knn["differ"]:
        fail(f"{label}: the page reports the structure and brute force differ")
    print(f"  {label}: k nearest to ({px:.2f}, {py:.2f}) = {knn['ids']}, as brute force")


def check_window(driver, boxes, a, b):
    driver.js("window.spatixLast.window = null;")
    (ax, ay), (bx, by) = [driver.js("return window.spatixWorldToClient(arguments[0], arguments[1]);",
                                    *p) for p in (a, b)]
    driver.pointer([("move", ax, ay), ("down",), ("move", (ax + bx) / 2, (ay + by) / 2),
                    ("move", bx, by), ("up",)])
    hits = driver.wait("return window.spatixLast.window;", "the window's hits")
    x0, y0, x1, y1 = [f32(v) for v in hits["area"]]
    expected = sorted(i for i, q in enumerate(boxes)
                      if q[0] <= x1 and x0 <= q[2] and q[1] <= y1 and y0 <= q[3])
    if sorted(hits["ids"]) != expected or hits["found"] != len(expected) or hits["differ"]:
        fail(f"window {hits['area']}: page {sorted(hits['ids'])[:20]}..., brute force here "
             f"{expected[:20]}... ({hits['found']} vs {len(expected)})")
    if not expected:
        fail("the window caught nothing: the drag missed the agents")
    scanned = set(hits["scannedIds"])
    if not set(expected) <= scanned or hits["scanned"] != len(scanned) or hits["visited"] < 1:
        fail(f"window: the hits are not among the {hits['scanned']} elements scanned, or no region visited")
    print(f"  window {[round(v, 1) for v in hits['area']]}: {len(expected)} hits, as brute force "
          f"({hits['scanned']} scanned, {hits['visited']} regions visited)")


def check_ray(driver, boxes, a, b):
    driver.js("window.spatixLast.ray = null;")
    (ax, ay), (bx, by) = [driver.js("return window.spatixWorldToClient(arguments[0], arguments[1]);",
                                    *p) for p in (a, b)]
    driver.pointer([("move", ax, ay), ("down",), ("move", bx, by), ("up",)], shift=True)
    ray = driver.wait("return window.spatixLast.ray;", "the ray's hits")
    if ray["differ"] or sorted(ray["ids"]) != sorted(ray["bruteIds"]):
        fail(f"ray: the structure's hits {ray['ids']} differ from brute force's {ray['bruteIds']}")
    if ray["ts"] != sorted(ray["ts"]):
        fail(f"ray: hits not in order of t: {ray['ts']}")
    # Every hit's box is crossed by the segment, by a slab test here.
    (fx, fy), (tx, ty) = ray["from"], ray["to"]
    for i in ray["ids"]:
        q = boxes[i]
        lo, hi = 0.0, 1.0
        for o, d, mn, mx in ((fx, tx - fx, q[0], q[2]), (fy, ty - fy, q[1], q[3])):
            if abs(d) < 1e-12:
                if not (mn - 1e-3 <= o <= mx + 1e-3):
                    fail(f"ray: hit {i} is beside the ray")
                continue
            t0, t1 = sorted(((mn - o) / d, (mx - o) / d))
            lo, hi = max(lo, t0), min(hi, t1)
        if lo > hi + 1e-4:
            fail(f"ray: hit {i} is not on the segment")
    print(f"  ray: {len(ray['ids'])} hits, first {ray['ids'][:1]}, as brute force")


def test(spatix, screenshot):
    server, url = serve(spatix, "--preset", "seed-002")
    try:
        run_test(spatix, server, url, screenshot)
    finally:
        if server.poll() is None:
            server.kill()
    with tempfile.TemporaryDirectory(prefix="spatix-view-") as scratch:
        test_files(spatix, pathlib.Path(scratch))
    print("test-browser: ok")


def test_files(spatix, scratch):
    """Data mode: a saved packed index of points, then a file of boxes."""
    import random
    rng = random.Random(2)
    points = scratch / "points.csv"
    points.write_text("id,x,y\n" + "".join(f"{100 + i},{rng.uniform(0, 500):.3f},"
                                           f"{rng.uniform(0, 300):.3f}\n" for i in range(1500)))
    saved = scratch / "points.spatix"
    subprocess.run([spatix, "build", str(points), "--points", "--index", "packed", "--out",
                    str(saved)], stdout=subprocess.DEVNULL, check=True)
    boxes = scratch / "boxes.csv"
    rows = []
    for i in range(800):
        x, y = rng.uniform(0, 400), rng.uniform(0, 400)
        rows.append(f"{i},{x:.3f},{y:.3f},{x + rng.uniform(0, 12):.3f},{y + rng.uniform(0, 12):.3f}\n")
    boxes.write_text("id,min_x,min_y,max_x,max_y\n" + "".join(rows))
    for path, check in ((saved, check_points), (boxes, check_boxes)):
        server, url = serve(spatix, str(path))
        driver = Driver(tempfile.mkdtemp(prefix="spatix-chromium-"))
        try:
            driver.call("POST", "/url", {"url": url})
            driver.wait("return window.spatix && window.spatix.frames > 0;", "frames drawn")
            check(spatix, driver)
        finally:
            driver.close()
            server.kill()


def check_points(spatix, driver):
    """A saved packed index of points: shown in itself, every structure offered and checked."""
    header = driver.js("return window.spatix.header;")
    if header["index"] != "packed" or header["regions"] < 1:
        fail(f"a saved packed index shows as {header['index']} with {header['regions']} regions")
    print(f"  saved packed index: shown as {header['describe']}, {header['regions']} regions")
    kinds = check_menu(driver, listed(spatix, "build"), "a file of points")
    boxes = boxes_of(driver)
    world = header["world"]
    side = min(world[2] - world[0], world[3] - world[1])
    cx, cy = (world[0] + world[2]) / 2, (world[1] + world[3]) / 2
    for n, kind in enumerate(kinds):
        switch(driver, kind)
        if boxes_of(driver) != boxes:
            fail(f"switching to {kind} moved the file's elements")
        if driver.js("return window.spatix.header.regions;") < 1 and kind != "brute-force":
            fail(f"{kind} draws no regions")
        check_knn(driver, boxes, (cx - side * (0.3 - 0.04 * n), cy + side * 0.2), kind)
        check_window(driver, boxes, (cx - side * 0.2, cy - side * 0.02 * n), (cx + side * 0.1, cy + side * 0.15))


def check_boxes(spatix, driver):
    """A file of boxes: every structure but those of points offered; the kd-tree refused."""
    check_menu(driver, listed(spatix, "query"), "a file of boxes")
    driver.js("window.spatixLast.error = null; send('index kd-tree');")
    error = driver.wait("return window.spatixLast.error;", "the kd-tree's refusal")
    if "points" not in error["message"]:
        fail(f"the kd-tree refused for another reason: {error['message']}")
    boxes = boxes_of(driver)
    world = driver.js("return window.spatix.header.world;")
    side = world[2] - world[0]
    cx, cy = (world[0] + world[2]) / 2, (world[1] + world[3]) / 2
    switch(driver, "packed")
    check_knn(driver, boxes, (cx + side * 0.1, cy - side * 0.07), "packed (boxes)")
    check_window(driver, boxes, (cx - side * 0.2, cy - side * 0.15), (cx + side * 0.05, cy + side * 0.1))
    check_ray(driver, boxes, (world[0] + side * 0.05, cy), (world[2] - side * 0.05, cy + side * 0.2))


def run_test(spatix, server, url, screenshot):
    profile = tempfile.mkdtemp(prefix="spatix-chromium-")
    driver = Driver(profile)
    try:
        driver.call("POST", "/url", {"url": url})
        driver.wait("return window.spatix && window.spatix.frames > 3;", "frames drawn")
        print(f"  page drawing ({driver.js('return window.spatix.renderer;')}), "
              f"{driver.js('return window.spatix.n;')} agents")
        if driver.js("return window.spatix.header.exact;"):
            fail("the moving agents' frame carries exact boxes, not quantised ones")
        driver.js("document.getElementById('pause').click();")
        driver.wait("return window.spatix.header.paused;", "the pause")
        world = driver.js("return window.spatix.header.world;")
        boxes = boxes_of(driver)
        if len(boxes) != 2000:
            fail(f"seed-002 shows {len(boxes)} objects, not 2000")
        cx, cy = (world[0] + world[2]) / 2, (world[1] + world[3]) / 2
        side = world[2] - world[0]
        check_knn(driver, boxes, (cx + side * 0.1, cy - side * 0.07), "sweep")
        check_window(driver, boxes, (cx - side * 0.2, cy - side * 0.15), (cx + side * 0.05, cy + side * 0.1))
        check_ray(driver, boxes, (world[0] + side * 0.05, cy), (world[2] - side * 0.05, cy + side * 0.2))
        # Every dynamic structure listed: the agents stay put, the answers match.
        kinds = check_menu(driver, listed(spatix, "view"), "agents")
        for n, kind in enumerate(kinds):
            switch(driver, kind)
            if boxes_of(driver) != boxes:
                fail(f"switching to {kind} moved paused agents")
            check_knn(driver, boxes, (cx - side * (0.3 - 0.05 * n), cy + side * 0.31), kind)
            check_window(driver, boxes, (cx - side * 0.1, cy - side * 0.02 * n), (cx + side * 0.2, cy + side * 0.1))
        driver.js("window.spatixLast.error = null; send('index packed');")
        refused = driver.wait("return window.spatixLast.error;", "the packed index's refusal")
        if "file" not in refused["message"]:
            fail(f"a static structure without a file: {refused['message']}")
        switch(driver, "grid")
        check_knn(driver, boxes, (cx + side * 0.1, cy - side * 0.07), "grid")
        png = base64.b64decode(driver.call("GET", "/screenshot"))
        pathlib.Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(screenshot).write_bytes(png)
        print(f"  screenshot: {screenshot}")
    finally:
        driver.close()
    server.send_signal(signal.SIGINT)
    try:
        code = server.wait(10)
    except subprocess.TimeoutExpired:
        server.kill()
        fail("spatix view did not end within 10 s of Ctrl-C")
    if code != 130:
        fail(f"spatix view ended with exit code {code} on Ctrl-C, expected 130")


def bench(spatix, write):
    agents = 100_000
    load = os.getloadavg()[0]
    measured = subprocess.run([spatix, "view", "--measure", "300", "--agents", str(agents),
                               "--index", "sweep"], stdout=subprocess.PIPE, text=True, check=True)
    server_text = measured.stdout.rstrip()
    server, url = serve(spatix, "--agents", str(agents), "--index", "sweep")
    try:
        driver = Driver(tempfile.mkdtemp(prefix="spatix-chromium-"))
        try:
            driver.call("POST", "/url", {"url": url})
            driver.wait("return window.spatix && window.spatix.frames > 5;", "frames drawn", 180)
            # Each frame received is counted with its bytes and the time its decoding took.
            driver.js("const decode = onFrame; window.spatixBench = { bytes: 0, decodes: [] };"
                      "onFrame = (buf) => { const t = performance.now(); decode(buf);"
                      "  window.spatixBench.decodes.push(performance.now() - t);"
                      "  window.spatixBench.bytes += buf.byteLength; };"
                      "window.spatix.draws.length = 0;")
            start = driver.js("return [window.spatix.received, window.spatix.frames, performance.now()];")
            time.sleep(15)
            end = driver.js("return [window.spatix.received, window.spatix.frames, performance.now()];")
            draws = sorted(driver.js("return window.spatix.draws.slice();"))
            decodes = sorted(driver.js("return window.spatixBench.decodes;"))
            frame_bytes = driver.js("return window.spatixBench.bytes;") / max(1, len(decodes))
            renderer = driver.js("return window.spatix.renderer;")
            version = driver.js("return navigator.userAgent;")
        finally:
            driver.close()
    finally:
        server.kill()
    if not draws or not decodes:
        fail("no frame received and drawn")
    seconds = (end[2] - start[2]) / 1000
    received, drawn = (end[0] - start[0]) / seconds, (end[1] - start[1]) / seconds
    median, p95 = draws[len(draws) // 2], draws[min(len(draws) - 1, int(len(draws) * 0.95))]
    decode = decodes[len(decodes) // 2]
    chrome = next((w for w in version.split() if w.startswith(("Chrome/", "HeadlessChrome/"))), "chromium")
    sys.path.insert(0, str(ROOT / "crates" / "spatix-py"))
    from benchdoc import replace_block, stamp
    text = (f"One run of `python3 scripts/test-browser.py target/release/spatix --bench --write` on "
            f"{stamp()}; release build; load average (1 min) {load:.1f} at the start).\n\n"
            f"The server, one thread: `spatix view --measure 300 --agents {agents} --index sweep` "
            f"steps and encodes 300 frames as fast as they go (the frame as `spatix sim` runs it, "
            f"then the frame's binary message with the regions), and printed:\n\n```text\n"
            f"{server_text}\n```\n\n"
            f"The page: {chrome}, headless, `--disable-gpu`, 1200 x 800 window, `spatix view "
            f"--agents {agents} --index sweep`, for {seconds:.1f} s: the frames it received and "
            f"drew a second, the bytes of a frame (the boxes quantised to 16 bits while they "
            f"move), the median time to decode one, and its draw time per frame (rasterising "
            f"agents and regions into the canvas's pixels and putting them on it, `{renderer}`) "
            f"over the {len(draws)} frames drawn:\n\n"
            f"| agents | received | drawn | bytes a frame | decode | draw median | draw p95 |\n"
            f"| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
            f"| {agents:,} | {received:.1f}/s | {drawn:.1f}/s | {frame_bytes:,.0f} | "
            f"{decode:.2f} ms | {median:.2f} ms | {p95:.2f} ms |")
    print(text)
    if write:
        replace_block(ROOT / "docs" / "BENCHMARKS.md", "<!-- view-draw:begin -->",
                      "<!-- view-draw:end -->", text)
        print("wrote docs/BENCHMARKS.md's view-draw block", file=sys.stderr)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    spatix = args[0]
    if "--bench" in args:
        bench(spatix, "--write" in args)
    else:
        screenshot = args[args.index("--screenshot") + 1] if "--screenshot" in args else \
            str(ROOT / "target" / "view-test.png")
        test(spatix, screenshot)


if __name__ == "__main__":
    main()
