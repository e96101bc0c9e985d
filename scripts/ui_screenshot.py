"""Take the README's screenshot of the web UI of ``kubetwin serve``: the README's session as
written (``kubetwin snapshot -f examples/snapshot``, then ``kubetwin serve --cluster
cluster-snapshot --kubelets examples/serve/kubelets.yaml``, on a free port), the page in Debian's
headless Chromium through Playwright, one view saved as a PNG.

    .venv/bin/python scripts/ui_screenshot.py [--view what-if|pod|node|overview] [-o docs/images/serve-ui-VIEW.png]

``what-if`` (the README's) is the What-if page with its example pod (the 6-CPU Guaranteed pod of
``examples/serve/solver-6cpu.json``, tolerating gpu-0's taint): each plugin's Filter verdict and
Score per node, the kubelets' verdicts beside them, ``pod`` the drill-down of the snapshot's pending pod, ``node`` the NUMA map
of node-a. Needs the test dependencies (``scripts/setup --test``) and chromium.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--view", choices=("what-if", "pod", "node", "overview"), default="what-if")
    ap.add_argument("-o", "--output", default=None, help="the PNG to write (default docs/images/serve-ui-VIEW.png)")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=820)
    args = ap.parse_args()
    out = Path(args.output or ROOT / "docs" / "images" / f"serve-ui-{args.view}.png")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        print("error: chromium is not installed (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("error: playwright is not installed (scripts/setup --test)", file=sys.stderr)
        return 1
    kubetwin = str(Path(sys.executable).parent / "kubetwin")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "examples").symlink_to(ROOT / "examples")
        subprocess.run([kubetwin, "snapshot", "-f", "examples/snapshot", "-o", "cluster-snapshot"], cwd=tmp,
                       check=True, capture_output=True)
        proc = subprocess.Popen([kubetwin, "serve", "--cluster", "cluster-snapshot", "--kubelets",
                                 "examples/serve/kubelets.yaml", "--port", "0"], cwd=tmp, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            port = re.search(r"127\.0\.0\.1:(\d+)", proc.stderr.readline())
            if port is None:
                print("error: kubetwin serve did not start", file=sys.stderr)
                return 1
            base = f"http://127.0.0.1:{port.group(1)}/ui/"
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                ready = "#view[data-state=ready]"
                shot = page
                if args.view == "what-if":
                    page.goto(base + "#/what-if")
                    page.wait_for_selector(ready)
                    page.click("text=Schedule it")
                    page.wait_for_selector("#score")
                    shot = page.locator("#view")
                elif args.view == "pod":
                    page.goto(base + "#/pending")
                    page.wait_for_selector(ready)
                    page.click("#pending tbody a")
                    page.wait_for_selector("[data-view=pod]")
                else:
                    page.goto(base + ("#/nodes/node-a" if args.view == "node" else "#/overview"))
                    page.wait_for_selector(ready)
                out.parent.mkdir(parents=True, exist_ok=True)
                shot.screenshot(path=str(out))
                browser.close()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    print(f"{out}: {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
