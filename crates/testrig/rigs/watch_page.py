#!/usr/bin/python3
"""Watch a page in a real headless Chromium over its DevTools protocol.

    watch_page.py CHROMIUM PROFILE_DIR URL EXPR UNTIL TIMEOUT_S [WIDTH,HEIGHT]

Opens URL, evaluates the JavaScript expression EXPR (it must give a
string) every 100 ms, and prints one JSON object per line: {"value": V}
each time the value changes, {"error": TEXT} for each console error,
uncaught exception or failed load (a Content-Security-Policy violation is
one), and {"end": "until"|"timeout"} last. It stops when a value starts
with UNTIL, or after TIMEOUT_S seconds. The window is WIDTH x HEIGHT
pixels when given (Chromium's own default otherwise). Python's websocket-client
(python3-websocket) speaks the protocol; nothing else is needed.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request

import websocket

DEBUG = bool(os.environ.get("WATCH_PAGE_DEBUG"))


def say(obj):
    print(json.dumps(obj), flush=True)


def main():
    chromium, profile, url, expr, until, timeout = sys.argv[1:7]
    window = ["--window-size=" + sys.argv[7]] if len(sys.argv) > 7 else []
    deadline = time.monotonic() + float(timeout)
    browser = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--remote-debugging-port=0",
         "--hide-scrollbars", "--user-data-dir=" + profile] + window
        + ["about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.monotonic() > deadline or browser.poll() is not None:
                say({"error": "chromium did not open its DevTools port"})
                say({"end": "timeout"})
                return
            time.sleep(0.05)
        with open(port_file) as f:
            port = f.readline().strip()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        # No Origin header: Chromium (111 and later) refuses a DevTools
        # connection that carries one unless --remote-allow-origins names
        # it, since an Origin means a web page is asking. This client is no
        # page, so it sends none, as Chromium's own tools and Playwright
        # do, rather than opening the port to some origin it would have to
        # make up (python3-websocket sends one by default).
        ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"],
                                         suppress_origin=True)
        ws.settimeout(0.1)
        ids = iter(range(1, 1 << 30))
        answers = {}

        def send(method, params=None):
            n = next(ids)
            ws.send(json.dumps({"id": n, "method": method, "params": params or {}}))
            return n

        def pump():
            """Read what has come: answers kept, events reported."""
            while True:
                try:
                    msg = json.loads(ws.recv())
                except websocket.WebSocketTimeoutException:
                    return
                if "id" in msg:
                    answers[msg["id"]] = msg
                    continue
                m, p = msg.get("method"), msg.get("params", {})
                if m == "Runtime.exceptionThrown":
                    say({"error": p["exceptionDetails"].get("text", "exception")
                         + " " + json.dumps(p["exceptionDetails"].get("exception", {}).get("description", ""))})
                elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                    say({"error": " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))})
                elif m == "Network.loadingFailed" and p.get("errorText") != "net::ERR_ABORTED":
                    # (ERR_ABORTED is a load the page itself called off:
                    # it navigated away, or replaced what was loading.)
                    say({"error": "load failed: " + p.get("errorText", "") + " " + requests.get(p.get("requestId"), "")})
                elif m == "Network.requestWillBeSent":
                    requests[p["requestId"]] = p["request"]["url"]
                    if DEBUG:
                        say({"debug": "request " + p["request"]["url"]})
                elif DEBUG and m == "Network.responseReceived":
                    say({"debug": "response %s %s" % (p["response"]["status"], p["response"]["url"])})
                elif m == "Log.entryAdded" and (
                        p["entry"].get("level") == "error"
                        or p["entry"].get("source") == "security"
                        or "Content Security Policy" in p["entry"].get("text", "")):
                    say({"error": p["entry"].get("text", "") + " " + p["entry"].get("url", "")})

        requests = {}
        for m in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            send(m)
        send("Page.navigate", {"url": url})
        last = None
        while time.monotonic() < deadline:
            n = send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
            while n not in answers and time.monotonic() < deadline:
                pump()
            answer = answers.pop(n, {})
            value = answer.get("result", {}).get("result", {}).get("value")
            if isinstance(value, str) and value != last:
                last = value
                say({"value": value})
                if value.startswith(until):
                    pump()
                    say({"end": "until"})
                    return
            time.sleep(0.1)
        say({"end": "timeout"})
    finally:
        browser.kill()
        browser.wait()


if __name__ == "__main__":
    main()
